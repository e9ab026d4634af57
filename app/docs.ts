import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import express, { type NextFunction, type Request, type Response } from 'express';

/**
 * The public API reference, built by `npm run docs` (scripts/build-docs.ts) and committed:
 * `GET /docs` is the Redoc page, `GET /openapi.yaml` the public OpenAPI document (openapi.yaml
 * without its `x-internal` admin operations).
 *
 * Both are built on DOCUMENTED_ORIGIN, the base URL of openapi.yaml, and served with the
 * installation's public origin (PUBLIC_URL, or the address Dispatch listens on) in its place: the
 * servers entry, the links and the code samples then point where this Dispatch answers, and a
 * client generated from the served document calls it.
 */

/** The origin openapi.yaml documents, which the built files carry. */
export const DOCUMENTED_ORIGIN = 'http://127.0.0.1:3000';

interface Asset {
  body: Buffer;
  gzipped: Buffer;
  etag: string;
}

interface AssetFile {
  url: URL;
  contentType: string;
}

const HTML: AssetFile = { url: new URL('../docs/public/index.html', import.meta.url), contentType: 'text/html; charset=utf-8' };
const YAML: AssetFile = { url: new URL('../docs/public/openapi.yaml', import.meta.url), contentType: 'application/yaml' };

/**
 * The files change only with a deploy and their URLs carry no version: caches may keep them but
 * must revalidate every time, which the ETag makes a bodiless 304 when nothing changed.
 */
const CACHE_CONTROL = 'public, no-cache';

const compress = promisify(gzip);

async function load(file: AssetFile, origin: string): Promise<Asset> {
  // As the URL parser writes it: characters that would end a JSON string, an HTML attribute or
  // the page's script (", <, >, `) come percent-encoded.
  const base = new URL(origin).href.replace(/\/$/, '');
  const body = Buffer.from((await readFile(file.url, 'utf8')).replaceAll(DOCUMENTED_ORIGIN, base));
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 27);
  // Weak: one validator for the identity and the gzip representation of the same content.
  return { body, gzipped: await compress(body, { level: 9 }), etag: `W/"${hash}"` };
}

function serve(file: AssetFile, origin: () => string): express.RequestHandler {
  let asset: Promise<Asset> | undefined;
  return (req: Request, res: Response, next: NextFunction) => {
    asset ??= load(file, origin());
    asset.then(
      ({ body, gzipped, etag }) => {
        res.setHeader('Cache-Control', CACHE_CONTROL);
        res.setHeader('ETag', etag);
        res.setHeader('Vary', 'Accept-Encoding');
        res.setHeader('X-Content-Type-Options', 'nosniff');
        if (req.fresh) {
          res.status(304).end();
          return;
        }
        res.setHeader('Content-Type', file.contentType);
        const encoded = req.acceptsEncodings('gzip', 'identity') === 'gzip';
        if (encoded) res.setHeader('Content-Encoding', 'gzip');
        const payload = encoded ? gzipped : body;
        res.setHeader('Content-Length', payload.length);
        res.status(200).end(payload);
      },
      (error: unknown) => {
        asset = undefined; // a missing build is retried on the next request
        next(error);
      },
    );
  };
}

/**
 * `GET /docs` and `GET /openapi.yaml` (HEAD too); mount at the root of the app. `origin` is read
 * at the first request, when the server listens and its address is known (PORT may be 0).
 */
export function docsRouter(origin: () => string): express.Router {
  const router = express.Router();
  router.get('/docs', serve(HTML, origin));
  router.get('/openapi.yaml', serve(YAML, origin));
  return router;
}
