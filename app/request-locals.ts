import type { Response } from 'express';

/** What the app's middleware records on `res.locals`, for the middleware after it and the request's log line. */
export interface RequestLocals {
  /** Given by the first middleware to every request. */
  requestId: string;
  /** Known once the request is routed to an operation. */
  operationId?: string;
  /** Known once the request's API key is found. */
  accountId?: string;
  apiKeyId?: string;
  /** Known once the admin request's token is found: an operator's id, or `root`. */
  operatorId?: string;
}

/** `res.locals` as this app fills it: Express types it as a record of `any`. */
export const requestLocals = (res: Response): RequestLocals => res.locals as RequestLocals;
