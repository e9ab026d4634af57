import express, { type NextFunction, type Request, type Response } from 'express';
import type { Knex } from 'knex';
import type { JobQueue } from '../db/queues.ts';
import { findRouteByDlrToken } from '../db/routes.ts';
import { ApiError } from '../domain/errors.ts';
import { DeliveryReportRecorder } from '../domain/delivery-report-recorder.ts';
import { parseHttpDeliveryReport } from '../providers/index.ts';
import type { DeliveryReport } from '../providers/types.ts';
import type { RecordedReport } from '../domain/message-outcomes.ts';
import { successBody } from './envelope.ts';
import { requestLocals } from './request-locals.ts';
import { refuseUnholdableBody } from './request-guard.ts';

/**
 * Where HTTP providers post delivery reports: `POST /callbacks/dlr/<route token>`. The token is
 * the route's secret, so only its provider knows the URL. Answers 200 once the report is stored,
 * also for a repeat, and for a report that arrived before its submit response.
 */
export function deliveryReportCallback(db: Knex, jobs: JobQueue, onRecorded: (routeId: number, report: DeliveryReport, recorded: RecordedReport) => void) {
  const router = express.Router();
  const reports = new DeliveryReportRecorder(db, jobs);
  router.post('/callbacks/dlr/:token', express.json({ limit: '64kb' }), refuseUnholdableBody, async (req: Request, res: Response, next: NextFunction) => {
    try {
      const route = await findRouteByDlrToken(db, String(req.params.token));
      if (!route || route.provider !== 'http') throw new ApiError(404, 'invalid_request_error', 'not_found', 'Unknown delivery-report URL.');
      const report = parseHttpDeliveryReport(req.body);
      if (!report)
        throw new ApiError(
          400,
          'invalid_request_error',
          'parameter_invalid',
          'A delivery report needs an id and a status of delivered, undelivered or failed.',
        );
      const recorded = await reports.record(route.id, report);
      onRecorded(route.id, report, recorded);
      res.status(200).json(successBody(requestLocals(res).requestId, { received: true, outcome: recorded.stored }));
    } catch (error) {
      next(error);
    }
  });
  return router;
}
