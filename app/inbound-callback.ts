import express, { type NextFunction, type Request, type Response } from 'express';
import type { Knex } from 'knex';
import type { JobQueue } from '../db/queues.ts';
import { findRouteByDlrToken } from '../db/routes.ts';
import { ApiError, invalidRequest } from '../domain/errors.ts';
import { receiveInboundDelivery } from '../domain/inbound-parts.ts';
import { parseHttpInbound } from '../providers/http-inbound.ts';
import { successBody } from './envelope.ts';
import { requestLocals } from './request-locals.ts';
import { refuseUnholdableBody } from './request-guard.ts';
import type { Logger } from './logger.ts';

/**
 * Where HTTP providers post the messages handsets send to the route's numbers:
 * `POST /callbacks/inbound/<route token>`, the same secret token as the route's delivery-report
 * URL. Answers 200 once the message is stored, also for a repeat (the route and the provider's
 * `id` name it), so a provider retrying an unanswered post never makes a second message.
 */
export function inboundCallback(db: Knex, jobs: JobQueue, logger: Pick<Logger, 'warn'>) {
  const router = express.Router();
  router.post('/callbacks/inbound/:token', express.json({ limit: '256kb' }), refuseUnholdableBody, async (req: Request, res: Response, next: NextFunction) => {
    let routeId: number | undefined;
    try {
      const route = await findRouteByDlrToken(db, String(req.params.token));
      if (!route || route.provider !== 'http') throw new ApiError(404, 'invalid_request_error', 'not_found', 'Unknown inbound URL.');
      routeId = route.id;
      const reading = parseHttpInbound(req.body);
      if (!reading.ok) throw invalidRequest(reading.param, reading.message);
      const outcome = await receiveInboundDelivery(db, jobs, route.id, reading.delivery, logger);
      res.status(200).json(successBody(requestLocals(res).requestId, { received: true, repeat: outcome === 'repeat' }));
    } catch (error) {
      // The token is a secret: the route's id stands for it, when the token named one.
      logger.warn({ route_id: routeId ?? null, request_id: requestLocals(res).requestId, reason: (error as Error).message }, 'HTTP inbound message not stored');
      next(error);
    }
  });
  return router;
}
