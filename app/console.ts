import { existsSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type NextFunction, type Request, type Response } from 'express';
import { ApiError } from '../domain/errors.ts';
import { errorBody } from './envelope.ts';
import { requestLocals } from './request-locals.ts';

/**
 * The web console (console/, a React application built by Vite into console/dist by `npm install`
 * and by `npm start` when stale: scripts/build-console.ts), served under /console/. Its files
 * carry a hash in their names and are cached for good; index.html is revalidated every time and
 * answers every client route under /console/ (the application routes in the browser).
 */
export const CONSOLE_DIST = fileURLToPath(new URL('../console/dist/', import.meta.url));

/**
 * The console reads the API on this origin only, and keeps its credentials in sessionStorage:
 * nothing else may run, load or be framed. ECharts and React set inline styles.
 */
const SECURITY_HEADERS = {
  'Content-Security-Policy':
    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
};

const NOT_BUILT = 'The console has not been built: run `npm install` (or `npm start`, which builds it when stale) in the Dispatch folder.';

function notBuilt(req: Request, res: Response): void {
  res.status(503).setHeader('Retry-After', '60');
  if (req.accepts(['json', 'html']) === 'html') {
    res
      .type('html')
      .send(`<!doctype html><html lang="en"><title>Console not built</title><h1>Console not built</h1><p>${NOT_BUILT.replaceAll('`', '')}</p></html>`);
    return;
  }
  res.json(errorBody(requestLocals(res).requestId, new ApiError(503, 'api_error', 'console_not_built', NOT_BUILT)));
}

/** `/console/...`: the built files in `dist`, its index.html for client routes, 503 when there is no build. */
export function consoleRouter(dist = CONSOLE_DIST): express.Router {
  const index = join(dist, 'index.html');
  const router = express.Router();
  router.use('/console', (_req: Request, res: Response, next: NextFunction) => {
    res.set(SECURITY_HEADERS);
    next();
  });
  router.use('/console/assets', express.static(join(dist, 'assets'), { index: false, immutable: true, maxAge: '1y' }));
  router.use('/console', (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      next();
      return;
    }
    // The application's URLs are relative to /console/, with its slash.
    if (req.originalUrl === '/console' || req.originalUrl.startsWith('/console?')) {
      res.redirect(302, `/console/${req.originalUrl.slice('/console'.length)}`);
      return;
    }
    // A missing file (a stale asset's name) is a 404, not the application.
    if (extname(req.path) !== '') {
      next();
      return;
    }
    if (!existsSync(index)) {
      notBuilt(req, res);
      return;
    }
    res.sendFile(index, { headers: { 'Cache-Control': 'no-cache' } });
  });
  return router;
}
