import { errorView, type ApiError } from '../domain/errors.ts';

export const API_VERSION = 'v1';

const meta = (requestId: string) => ({ request_id: requestId, api_version: API_VERSION });

export const successBody = (requestId: string, data: unknown, pagination?: unknown) =>
  pagination === undefined ? { success: true, data, meta: meta(requestId) } : { success: true, data, pagination, meta: meta(requestId) };

export const errorBody = (requestId: string, error: ApiError) => ({
  success: false,
  error: errorView(error),
  meta: meta(requestId),
});
