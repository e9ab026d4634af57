import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import yaml from 'js-yaml';
import { DEFAULTED_QUERY_PARAMETERS } from '../../handlers/types.ts';
import { call } from '../support/client.ts';
import { createTenant } from '../support/fixtures.ts';

interface Parameter {
  name: string;
  in: string;
  schema?: { default?: unknown };
  $ref?: string;
}

describe('query parameter defaults', () => {
  it('types as always present exactly the query parameters openapi.yaml gives a default', async () => {
    const document = yaml.load(await readFile('openapi.yaml', 'utf8')) as {
      paths: Record<string, Record<string, { parameters?: Parameter[] }>>;
      components: { parameters: Record<string, Parameter> };
    };
    const resolve = (parameter: Parameter) => (parameter.$ref ? document.components.parameters[parameter.$ref.split('/').pop() as string] : parameter);
    const defaulted = new Set<string>();
    for (const item of Object.values(document.paths)) {
      for (const operation of Object.values(item)) {
        for (const parameter of (operation.parameters ?? []).map(resolve))
          if (parameter.in === 'query' && parameter.schema?.default !== undefined) defaulted.add(parameter.name);
      }
    }
    expect([...defaulted].sort()).to.deep.equal([...DEFAULTED_QUERY_PARAMETERS].sort());
  });

  it('fills them in from openapi.yaml when a request leaves them out', async () => {
    const tenant = await createTenant();
    const listed = await call('GET', '/messages', { auth: tenant.key });
    expect(listed.body.pagination).to.include({ page: 1, limit: 50 });
  });
});
