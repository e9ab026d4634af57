/**
 * `x-codeSamples` (curl and TypeScript) for every operation of an OpenAPI document, made from
 * the operation's method, path, security and first request example, so that an operation added
 * later gets its samples from the next `npm run docs` without anyone writing them.
 *
 * Placeholders a reader (and test/docs/code-samples.test.ts) replaces: the credential is read
 * from the environment (`DISPATCH_API_KEY`, `DISPATCH_ADMIN_TOKEN`), and each path parameter is
 * its documented example (`msg_sCq0...`), percent-encoded as the path needs it.
 */

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  example?: unknown;
  $ref?: string;
}

interface Operation {
  operationId?: string;
  security?: Record<string, unknown>[];
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { example?: unknown; examples?: Record<string, { value?: unknown; $ref?: string }> }> };
  'x-codeSamples'?: CodeSample[];
  [key: string]: unknown;
}

export interface OpenApiDocument {
  servers?: { url: string }[];
  security?: Record<string, unknown>[];
  paths: Record<string, Record<string, unknown> & { parameters?: Parameter[] }>;
  components?: Record<string, Record<string, unknown>>;
}

export interface CodeSample {
  lang: 'Shell' | 'TypeScript';
  label: string;
  source: string;
}

/** The environment variable that holds each security scheme's bearer credential. */
export const CREDENTIAL_VARIABLES: Record<string, string> = { apiKey: 'DISPATCH_API_KEY', adminToken: 'DISPATCH_ADMIN_TOKEN' };

function resolve<T>(document: OpenApiDocument, node: T & { $ref?: string }): T {
  if (typeof node?.$ref !== 'string') return node;
  const [, , type, name] = node.$ref.split('/');
  const target = document.components?.[type]?.[name];
  if (target === undefined) throw new Error(`unresolved $ref ${node.$ref}`);
  return resolve(document, target as T & { $ref?: string });
}

function requestExample(document: OpenApiDocument, operation: Operation): unknown {
  const media = operation.requestBody && resolve(document, operation.requestBody).content?.['application/json'];
  if (!media) return undefined;
  if (media.example !== undefined) return media.example;
  const first = Object.values(media.examples ?? {})[0];
  if (first === undefined) throw new Error(`${operation.operationId}: a JSON request body without an example`);
  return resolve(document, first).value;
}

function credentialVariable(document: OpenApiDocument, operation: Operation): string | undefined {
  const requirement = (operation.security ?? document.security ?? [])[0];
  const scheme = requirement && Object.keys(requirement)[0];
  if (scheme === undefined) return undefined;
  const variable = CREDENTIAL_VARIABLES[scheme];
  if (variable === undefined) throw new Error(`${operation.operationId}: no credential variable for the security scheme ${scheme}`);
  return variable;
}

/** The path with each parameter replaced by its example, encoded as a path segment. */
function examplePath(document: OpenApiDocument, path: string, parameters: Parameter[], operationId: string): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const parameter = parameters.find((candidate) => candidate.in === 'path' && candidate.name === name);
    if (parameter?.example === undefined) throw new Error(`${operationId}: the path parameter ${name} has no example`);
    if (typeof parameter.example !== 'string' && typeof parameter.example !== 'number')
      throw new Error(`${operationId}: the example of the path parameter ${name} is not a string or a number`);
    return encodeURIComponent(parameter.example);
  });
}

/** A single-quoted shell word: nothing inside is expanded. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

function indent(text: string, by: string): string {
  return text
    .split('\n')
    .map((line, index) => (index === 0 ? line : by + line))
    .join('\n');
}

export function curlSample(url: string, method: string, credential: string | undefined, body: unknown): string {
  const lines = [`curl${method === 'get' ? '' : ` -X ${method.toUpperCase()}`} ${shellQuote(url)}`];
  if (credential) lines.push(`-H "Authorization: Bearer $${credential}"`);
  if (body !== undefined) lines.push(`-H 'Content-Type: application/json'`, `-d ${shellQuote(JSON.stringify(body, null, 2))}`);
  return lines.join(' \\\n  ');
}

export function typeScriptSample(url: string, method: string, credential: string | undefined, body: unknown): string {
  const headers = [
    ...(credential ? [`Authorization: \`Bearer \${process.env.${credential}}\``] : []),
    ...(body !== undefined ? [`'Content-Type': 'application/json'`] : []),
  ];
  const init = [
    ...(method === 'get' ? [] : [`method: '${method.toUpperCase()}'`]),
    ...(headers.length > 0 ? [`headers: { ${headers.join(', ')} }`] : []),
    ...(body !== undefined ? [`body: JSON.stringify(${indent(JSON.stringify(body, null, 2), '  ')})`] : []),
  ];
  return [
    `const response = await fetch(${JSON.stringify(url)}, {`,
    ...init.map((line) => `  ${line},`),
    `});`,
    `const answer = await response.json();`,
    `console.log(response.status, JSON.stringify(answer, null, 2));`,
  ].join('\n');
}

/** Sets `x-codeSamples` on every operation of `document` (in place), for its first server. */
export function addCodeSamples(document: OpenApiDocument): OpenApiDocument {
  const base = document.servers?.[0]?.url;
  if (!base) throw new Error('the document has no servers[0].url to build samples on');
  for (const [path, item] of Object.entries(document.paths)) {
    const shared = (item.parameters ?? []).map((parameter) => resolve(document, parameter));
    for (const method of METHODS) {
      const operation = item[method] as Operation | undefined;
      if (!operation) continue;
      const own = (operation.parameters ?? []).map((parameter) => resolve(document, parameter));
      const parameters = [...own, ...shared.filter((parameter) => !own.some((mine) => mine.name === parameter.name && mine.in === parameter.in))];
      const operationId = operation.operationId ?? `${method.toUpperCase()} ${path}`;
      const url = base + examplePath(document, path, parameters, operationId);
      const credential = credentialVariable(document, operation);
      const body = requestExample(document, operation);
      operation['x-codeSamples'] = [
        { lang: 'Shell', label: 'curl', source: curlSample(url, method, credential, body) },
        { lang: 'TypeScript', label: 'TypeScript (fetch)', source: typeScriptSample(url, method, credential, body) },
      ];
    }
  }
  return document;
}
