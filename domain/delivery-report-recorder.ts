import type { Knex } from 'knex';
import type { JobQueue } from '../db/queues.ts';
import type { DeliveryReport } from '../providers/types.ts';
import { Batcher } from '../lib/batcher.ts';
import { recordDeliveryReports, type RecordedReport, type RouteReport } from './message-outcomes.ts';

/**
 * Records delivery reports as they arrive, those that arrive together in one transaction
 * (lib/batcher.ts): an upstream reports about as fast as Dispatch submits, so one report a
 * transaction would cost the database as much again as the sending.
 */
export class DeliveryReportRecorder {
  readonly #batcher: Batcher<RouteReport, RecordedReport>;

  constructor(db: Knex, jobs: JobQueue) {
    this.#batcher = new Batcher<RouteReport, RecordedReport>({
      run: (reports) => recordDeliveryReports(db, jobs, reports),
      // A batch that fails as a whole (a deadlock, an outage) is tried again report by report.
      runOne: async (report) => (await recordDeliveryReports(db, jobs, [report]))[0],
      maxBatch: 64,
      // One batch at a time: no customer waits on a report, and the reports that arrive while a
      // batch commits go together in the next (8 a transaction in `npm run bench`, against 6 with two).
      maxInFlight: 1,
    });
  }

  /** Resolves once the report is stored (applied, or kept for its submit response); rejects when it could not be. */
  record(routeId: number, report: DeliveryReport): Promise<RecordedReport> {
    return this.#batcher.submit({ routeId, report });
  }
}
