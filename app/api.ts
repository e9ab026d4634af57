import { fileURLToPath } from 'node:url';
import express, { type NextFunction, type Request, type Response } from 'express';
import { OpenAPIBackend, type Context } from 'openapi-backend';
import type { OperatorRole } from '../db/operators.ts';
import { ApiError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import { handlers } from '../handlers/index.ts';
import type { AdminCaller, CustomerCaller, Services } from '../handlers/types.ts';
import { authenticateAdmin, authenticateCustomer, authenticateMetrics, forgetChangedKeys, type AuthDependencies } from './auth.ts';
import { errorBody, successBody } from './envelope.ts';
import { consoleRouter } from './console.ts';
import { docsRouter } from './docs.ts';
import { fromValidationErrors, toApiError } from './error-response.ts';
import { customizeRequestAjv } from './request-formats.ts';
import { fastRouting } from './openapi-backend-internals.ts';
import { nonCanonicalInteger, refuseUnholdableText } from './request-guard.ts';
import { redactPath } from './log-redaction.ts';
import { requestLocals } from './request-locals.ts';
import type { Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';

export const DEFINITION_PATH = fileURLToPath(new URL('../openapi.yaml', import.meta.url));
export const BODY_LIMIT = '256kb';
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** What every process serves, whatever its role: request logs, health probes and metrics. */
export interface ProbeDependencies {
  logger: Logger;
  readiness: () => Promise<boolean>;
  metrics: Metrics;
  /** METRICS_TOKEN: when set, GET /metrics requires it as a bearer token. */
  metricsToken: string | undefined;
}

/** What a process serving the API adds. */
export interface ApiDependencies {
  services: Services;
  /** Routes outside the versioned API, mounted before it (provider callbacks). */
  callbacks: express.Router[];
  auth: AuthDependencies;
  /** PUBLIC_URL, or the address the server listens on: known once it listens. */
  publicOrigin: () => string;
}

interface HandlerResult {
  status: number;
  data: unknown;
  pagination?: unknown;
  headers?: Record<string, string>;
}

type Caller = CustomerCaller | AdminCaller;

/** openapi-backend's context, with the request's parts read as what they are, unknown (the library types them `any`). */
type BackendContext = Context<unknown, Record<string, unknown>, Record<string, unknown>, Record<string, unknown>>;

/** 405 naming the methods the path allows, in `Allow` too (GET brings HEAD). */
function methodNotAllowed(req: Request, methods: readonly string[]): ApiError {
  const allowed = methods.flatMap((method) => (method === 'get' ? ['GET', 'HEAD'] : [method.toUpperCase()]));
  return new ApiError(405, 'invalid_request_error', 'method_not_allowed', `${req.method} is not allowed on ${req.path}; use ${allowed.join(', ')}.`, {
    headers: { Allow: allowed.join(', ') },
  });
}

/**
 * The methods of each path of the document written without parameters (`/messages/send`). A
 * request for such a path with another method is answered 405 before routing, which would
 * otherwise match it to a templated path (`GET /messages/send` to `GET /messages/{id}`).
 */
function literalPathMethods(api: OpenAPIBackend): Map<string, string[]> {
  const paths = Object.entries(api.definition.paths ?? {}).filter(([path]) => !path.includes('{'));
  return new Map(paths.map(([path, item]) => [path, METHODS.filter((method) => item?.[method] !== undefined)]));
}

/** The OpenAPI document as a router and validator, with one handler per operationId. */
export async function createBackend(deps: ApiDependencies): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend({
    definition: DEFINITION_PATH,
    strict: true,
    validate: true,
    coerceTypes: true,
    // verbose: errors carry their schema, whose `x-expected` makes the message human.
    ajvOpts: { allErrors: true, verbose: true },
    customizeAjv: customizeRequestAjv,
    quick: true,
  });

  api.registerSecurityHandler('apiKey', (c: BackendContext, req: Request, res: Response) =>
    authenticateCustomer(deps.auth, req, res, (c.operation as Record<string, unknown>)['x-required-scope'] as string | undefined),
  );
  api.registerSecurityHandler('adminToken', (c: BackendContext, req: Request, res: Response) =>
    authenticateAdmin(deps.auth, req, res, (c.operation as Record<string, unknown>)['x-required-role'] as OperatorRole),
  );

  api.register({
    postRoutingHandler: (c: BackendContext, _req: Request, res: Response) => {
      // Known from here on, so that refusals (401, 403, 429, 400) are logged and measured by operation too.
      if (c.operation) requestLocals(res).operationId = c.operation.operationId;
    },
    notFound: (_c: BackendContext, req: Request) => {
      throw new ApiError(404, 'invalid_request_error', 'not_found', `Unrecognized request URL (${req.method} ${req.originalUrl}).`);
    },
    methodNotAllowed: (_c: BackendContext, req: Request) => {
      throw methodNotAllowed(
        req,
        METHODS.filter((method) => api.router.matchOperation({ method, path: req.path, headers: {} })),
      );
    },
    unauthorizedHandler: (c: BackendContext) => {
      const results: unknown[] = Object.values(c.security ?? {});
      const failed = results.find((result): result is { error: unknown } => typeof result === 'object' && result !== null && 'error' in result);
      // A security handler's rejection, whatever it is, goes on to the error writer as thrown.
      const error: unknown = failed?.error ?? new ApiError(401, 'authentication_error', 'unauthorized', 'Authentication failed.');
      throw error;
    },
    validationFail: (c: BackendContext) => {
      const headerNames = (c.operation.parameters ?? []).flatMap((parameter) => ('in' in parameter && parameter.in === 'header' ? [parameter.name] : []));
      throw fromValidationErrors(c.validation.errors ?? [], headerNames);
    },
    preOperationHandler: (c: BackendContext, req: Request) => {
      const refused = nonCanonicalInteger(c.operation, c.request.params, req.query);
      if (refused) throw refused;
    },
    postResponseHandler: (c: BackendContext, _req: Request, res: Response) => {
      const result = c.response as HandlerResult;
      forgetChangedKeys(deps.auth, c.security?.apiKey as Caller | undefined, (c.operation as Record<string, unknown>)['x-required-scope']);
      for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
      res.status(result.status).json(successBody(requestLocals(res).requestId, result.data, result.pagination));
    },
  });

  for (const [operationId, handler] of Object.entries(handlers)) {
    api.register(operationId, (c: BackendContext, _req: Request, res: Response) => {
      const caller = (c.security?.apiKey ?? c.security?.adminToken) as Caller;
      const request = { params: c.request.params, query: c.request.query, headers: c.request.headers, body: c.request.requestBody };
      const context = { services: deps.services, caller, requestId: requestLocals(res).requestId };
      return (handler as (request: unknown, context: unknown) => Promise<HandlerResult>)(request, context);
    });
  }

  // Quick mode compiles no validator at init; only the request validators are compiled, here,
  // before the first request. openapi-backend would also compile one for every response, which
  // Dispatch never runs: 3 s of start and about 100 MB of heap that stayed resident.
  // Quick mode also skips the check of the document, made here on the loaded document.
  await api.init();
  await api.loadDocument();
  api.validateDefinition();
  api.validator.preCompileRequestValidators();
  fastRouting(api);
  const missing = api
    .getOperations()
    .map((operation) => operation.operationId as string)
    .filter((id) => !(id in handlers));
  if (missing.length > 0) throw new Error(`openapi.yaml has operations without a handler: ${missing.join(', ')}`);
  return api;
}

const hasBody = (req: Request) => req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/** The versioned API under /api/v1, with the provider callbacks and the docs beside it. */
async function mountApi(app: express.Express, deps: ApiDependencies): Promise<void> {
  const api = await createBackend(deps);
  app.use(deps.callbacks);
  app.use(docsRouter(deps.publicOrigin));
  app.use(consoleRouter());

  app.use('/api/v1', (req: Request, _res: Response, next: NextFunction) => {
    if (hasBody(req) && !req.is('application/json')) {
      next(new ApiError(415, 'invalid_request_error', 'unsupported_media_type', 'Request bodies must be sent as Content-Type: application/json.'));
      return;
    }
    next();
  });
  app.use('/api/v1', express.json({ limit: BODY_LIMIT, strict: false }));
  app.use('/api/v1', refuseUnholdableText(api));
  const literalPaths = literalPathMethods(api);
  app.use('/api/v1', (req: Request, res: Response, next: NextFunction) => {
    // HEAD is GET without the body: Node drops the body of an answer to HEAD.
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const literal = literalPaths.get(req.path);
    if (literal && !literal.includes(method.toLowerCase())) {
      next(methodNotAllowed(req, literal));
      return;
    }
    api
      .handleRequest(
        { method, path: req.path, query: req.query as Record<string, string>, headers: req.headers as Record<string, string>, body: req.body as unknown },
        req,
        res,
      )
      .catch(next);
  });
}

/**
 * The HTTP application: request ids and logs, health probes and metrics, the API unless this
 * process only works jobs (`apiDeps` undefined), and one error writer for everything.
 */
export async function createApp(deps: ProbeDependencies, apiDeps: ApiDependencies | undefined): Promise<express.Express> {
  const app = express();
  // A request line's fields are fixed and hold no secret (its path is redacted): it skips the
  // logger's redaction, which costs more than the rest of the line.
  const requestLog = deps.logger.child({}, { redact: [] });
  app.disable('x-powered-by');
  app.disable('etag');

  app.use((req: Request, res: Response, next: NextFunction) => {
    const requestId = newId('req');
    const started = process.hrtime.bigint();
    requestLocals(res).requestId = requestId;
    res.setHeader('X-Request-Id', requestId);
    res.on('finish', () => {
      const { operationId, accountId, apiKeyId, operatorId } = requestLocals(res);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      deps.metrics.httpDuration.observe({ operation: operationId ?? 'none', method: req.method, status: String(res.statusCode) }, seconds);
      requestLog.info(
        {
          request_id: requestId,
          method: req.method,
          path: redactPath(req.path),
          operation_id: operationId,
          status: res.statusCode,
          account_id: accountId,
          api_key_id: apiKeyId,
          operator_id: operatorId,
          duration_ms: seconds * 1000,
        },
        'request',
      );
    });
    next();
  });

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const ready = await deps.readiness().catch(() => false);
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'unavailable' });
  });

  app.get('/metrics', async (req, res, next) => {
    try {
      authenticateMetrics(deps.metricsToken, req);
      const text = await deps.metrics.render();
      res.type(deps.metrics.registry.contentType).send(text);
    } catch (error) {
      next(error);
    }
  });

  if (apiDeps) await mountApi(app, apiDeps);

  // A person who opens the server's address is sent to the console; a program is told where the API is.
  app.get('/', (req: Request, res: Response, next: NextFunction) => {
    if (apiDeps && req.accepts(['json', 'html']) === 'html') {
      res.redirect(302, '/console/');
      return;
    }
    next(
      new ApiError(
        404,
        'invalid_request_error',
        'not_found',
        'Nothing is served at /: the API is under /api/v1, its reference is at /docs, and the console at /console/.',
      ),
    );
  });

  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(new ApiError(404, 'invalid_request_error', 'not_found', `Unrecognized request URL (${req.method} ${req.originalUrl}).`));
  });

  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const { apiError, unexpected } = toApiError(error);
    const { requestId } = requestLocals(res);
    if (unexpected) deps.logger.error({ request_id: requestId, err: error }, 'unexpected error');
    else if (apiError.status === 503) deps.logger.warn({ request_id: requestId, err: error }, 'database unreachable: answered 503');
    for (const [name, value] of Object.entries(apiError.headers)) res.setHeader(name, value);
    res.status(apiError.status).json(errorBody(requestId, apiError));
  });

  return app;
}
