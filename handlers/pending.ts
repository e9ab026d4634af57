import { ApiError } from '../domain/errors.ts';

/**
 * Stands in for the handlers of operations that later work (messaging, webhooks) will build;
 * they answer 501 in the error envelope so a caller is never left guessing.
 */
export const notYetImplemented = async (): Promise<never> => {
  throw new ApiError(501, 'api_error', 'not_implemented', 'This operation is not available yet in this version of Dispatch.');
};
