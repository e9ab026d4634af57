import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { DEFINITION_PATH } from '../../app/api.ts';

export interface DocumentedOperation {
  operationId: string;
  method: string;
  path: string;
  scope: string | undefined;
  /** The admin operations' `x-required-role`. */
  role: string | undefined;
  admin: boolean;
  hasBody: boolean;
  statuses: number[];
}

interface OperationObject {
  operationId: string;
  'x-required-scope'?: string;
  'x-required-role'?: string;
  security?: Record<string, string[]>[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
}

/**
 * Every operation of openapi.yaml, with path parameters filled by placeholders. Read
 * synchronously, because mocha builds its test tree before anything asynchronous runs.
 */
export function documentedOperations(): DocumentedOperation[] {
  const document = yaml.load(readFileSync(DEFINITION_PATH, 'utf8')) as { paths: Record<string, Record<string, OperationObject>> };
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map(([method, operation]) => ({
        operationId: operation.operationId,
        method: method.toUpperCase(),
        path: path.replace(/\{([^}]+)\}/g, (_, name: string) => placeholder(name)),
        scope: operation['x-required-scope'],
        role: operation['x-required-role'],
        admin: (operation.security ?? []).some((requirement) => 'adminToken' in requirement),
        hasBody: operation.requestBody !== undefined,
        statuses: Object.keys(operation.responses).map(Number),
      })),
  );
}

function placeholder(name: string): string {
  if (name === 'route_id') return '999999';
  if (name === 'number') return '%2B447700900123';
  return 'zz_000000000000000000000000';
}
