import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import yaml from 'js-yaml';
import { DEFINITION_PATH } from '../../app/api.ts';
import { OPERATOR_ROLES, type OperatorRole } from '../../db/operators.ts';
import { generateApiKey, generateOperatorToken } from '../../domain/api-key-secret.ts';
import { roleAllows } from '../../domain/operators.ts';
import { SCOPES } from '../../domain/scopes.ts';
import { call, expectError, type ApiResponse } from '../support/client.ts';
import { createAdminKey, createOperator, createTenant, storeMessages, type Tenant } from '../support/fixtures.ts';
import { harness } from '../support/harness.ts';
import { ownInboundMessage } from '../support/inbound.ts';
import { documentedOperations, type DocumentedOperation } from '../support/operations.ts';

/**
 * Every operation of openapi.yaml against every way a caller can be refused, generated from the
 * document so that a new operation is covered the day it is written. Keys are made once, by the
 * operator; each refusal must leave the resource as it was.
 */

const PLACEHOLDER_ID = 'zz_000000000000000000000000';
/** The one customer operation that needs no scope: any valid key may read itself. Every other names one. */
const SCOPELESS = 'getCurrentApiKey';
/** The only address the locked key accepts; the tests call from 127.0.0.1. */
const ALLOWED_ELSEWHERE = '203.0.113.7';

const request = (operation: DocumentedOperation, options: { auth?: string; headers?: Record<string, string>; path?: string } = {}) =>
  call(operation.method, options.path ?? operation.path, { ...options, body: operation.hasBody ? {} : undefined });

function expectUnauthenticated(response: ApiResponse): void {
  expectError(response, 401, 'unauthorized');
  expect(response.body.error.type).to.equal('authentication_error');
}

function expectIpRefused(response: ApiResponse): void {
  expectError(response, 403, 'forbidden');
  expect(response.body.error.details).to.deep.include({ reason: 'ip_not_allowed' });
}

/** For each collection with ids in its paths: how to make one of an account's resources, and how its owner sees it. */
const resources: Record<string, { create: (owner: Tenant) => Promise<string>; view: (owner: Tenant, id: string) => Promise<unknown> }> = {
  messages: {
    create: async (owner) => (await storeMessages(owner, [{}]))[0],
    view: async (owner, id) => (await call('GET', `/messages/${id}`, { auth: owner.key })).body.data,
  },
  'inbound-messages': {
    create: ownInboundMessage,
    view: async (owner, id) => (await call('GET', `/inbound-messages/${id}`, { auth: owner.key })).body.data,
  },
  senders: {
    create: async (owner) => (await call('POST', '/senders/create', { auth: owner.key, body: { sender_id: 'Owned' } })).body.data.id,
    view: async (owner, id) => (await call('GET', `/senders/${id}`, { auth: owner.key })).body.data,
  },
  'api-keys': {
    create: async (owner) => (await call('POST', '/api-keys/create', { auth: owner.key, body: { name: 'Owned', permissions: ['sms:read'] } })).body.data.id,
    view: async (owner, id) => (await call('GET', '/api-keys', { auth: owner.key })).body.data.data.find((key: { id: string }) => key.id === id),
  },
  webhooks: {
    create: async (owner) => (await call('POST', '/webhooks/create', { auth: owner.key, body: { url: 'http://127.0.0.1:9/owned' } })).body.data.id,
    view: async (owner, id) => (await call('GET', `/webhooks/${id}`, { auth: owner.key })).body.data,
  },
};

describe('the authorization matrix, generated from openapi.yaml', () => {
  const operations = documentedOperations();
  const customerOperations = operations.filter((operation) => !operation.admin);
  let tenant: Tenant;
  let revoked: string;
  let expired: string;
  let locked: string;

  before(async () => {
    tenant = await createTenant();
    const revokedKey = await createAdminKey(tenant.accountId, { name: 'Revoked' });
    expect((await call('DELETE', `/api-keys/${revokedKey.id}`, { auth: tenant.key })).status).to.equal(200);
    revoked = revokedKey.plain_key;
    const expiredKey = await createAdminKey(tenant.accountId, { name: 'Expired', expires_at: new Date(Date.now() + 60_000).toISOString() });
    await harness
      .db('api_keys')
      .where({ id: expiredKey.id })
      .update({ expires_at: new Date(Date.now() - 1000) });
    expired = expiredKey.plain_key;
    locked = (await createAdminKey(tenant.accountId, { name: 'Locked', allowed_ips: [ALLOWED_ELSEWHERE] })).plain_key;
  });

  it(`finds customer and admin operations in the document, each customer one but ${SCOPELESS} naming a known scope`, () => {
    expect(customerOperations).to.have.length.above(0);
    expect(operations.filter((operation) => operation.admin)).to.have.length.above(0);
    for (const operation of customerOperations) {
      if (operation.operationId === SCOPELESS) expect(operation.scope, SCOPELESS).to.equal(undefined);
      else expect(SCOPES, operation.operationId).to.include(operation.scope);
    }
  });

  for (const operation of customerOperations) {
    describe(`${operation.method} ${operation.path} (${operation.operationId})`, () => {
      it('answers 401 without a key', async () => {
        const response = await request(operation);
        expectUnauthenticated(response);
        expect(response.body.error.message).to.match(/No API key provided/);
      });

      it('answers 401 to a malformed key, a key with a wrong checksum, an unknown key and another scheme', async () => {
        const wrongChecksum = tenant.key.slice(0, -1) + (tenant.key.endsWith('a') ? 'b' : 'a');
        for (const token of ['not-a-key', `${tenant.key}x`, wrongChecksum, generateApiKey()]) {
          expectUnauthenticated(await request(operation, { auth: token }));
        }
        expectUnauthenticated(await request(operation, { headers: { authorization: `Basic ${Buffer.from(`${tenant.key}:`).toString('base64')}` } }));
      });

      it('answers 401 to a revoked key', async () => {
        expectUnauthenticated(await request(operation, { auth: revoked }));
      });

      it('answers 401 to an expired key, saying so', async () => {
        const response = await request(operation, { auth: expired });
        expectUnauthenticated(response);
        expect(response.body.error.message).to.match(/expired/);
      });

      if (operation.scope !== undefined) {
        it(`answers 403 forbidden to a key holding every scope but ${operation.scope}`, async () => {
          const key = await createAdminKey(tenant.accountId, { name: 'Almost all', permissions: SCOPES.filter((scope) => scope !== operation.scope) });
          const response = await request(operation, { auth: key.plain_key });
          expectError(response, 403, 'forbidden');
          expect(response.body.error.details).to.deep.equal({ required_scope: operation.scope });
        });
      }

      it('answers 403 forbidden (ip_not_allowed) to a key used from an address off its allowlist', async () => {
        expectIpRefused(await request(operation, { auth: locked }));
      });

      it('ignores a spoofed X-Forwarded-For naming an allowed address without TRUST_PROXY', async () => {
        expectIpRefused(await request(operation, { auth: locked, headers: { 'x-forwarded-for': ALLOWED_ELSEWHERE } }));
      });

      if (operation.path.includes(PLACEHOLDER_ID)) {
        it("answers another account's id with 404, exactly like a missing one, and leaves it as it was", async () => {
          const collection = operation.path.split('/')[1];
          const resource = resources[collection];
          expect(resource, `no fixture makes a resource for ${collection}: add one to this file`).to.not.equal(undefined);
          const owner = await createTenant();
          const id = await resource.create(owner);
          const before = await resource.view(owner, id);
          expect(before, `the fixture for ${collection} made nothing`).to.not.equal(undefined);

          const foreign = await request(operation, { auth: tenant.key, path: operation.path.replace(PLACEHOLDER_ID, id) });
          const missing = await request(operation, { auth: tenant.key });
          expectError(foreign, 404, 'resource_not_found');
          expect(foreign.body.error.message.replace(id, 'ID')).to.equal(missing.body.error.message.replace(PLACEHOLDER_ID, 'ID'));
          expect(await resource.view(owner, id)).to.deep.equal(before);
        });
      }
    });
  }

  describe('the admin operations, by the role each requires', () => {
    const adminOperations = operations.filter((op) => op.admin);
    const tokens = {} as Record<OperatorRole, string>;
    let revokedOperator: string;

    before(async () => {
      for (const role of OPERATOR_ROLES) tokens[role] = (await createOperator(role)).token;
      const revoked = await createOperator('admin');
      expect((await call('POST', `/admin/operators/${revoked.id}/revoke`, { auth: 'admin' })).status).to.equal(200);
      revokedOperator = revoked.token;
    });

    it('finds every admin operation, and only those, declaring a known x-required-role, and 403 exactly when a role is below it', () => {
      expect(adminOperations).to.have.length.above(0);
      for (const operation of adminOperations) {
        expect(OPERATOR_ROLES, operation.operationId).to.include(operation.role);
        expect(operation.statuses.includes(403), `${operation.operationId} declares 403`).to.equal(operation.role !== 'viewer');
      }
      for (const operation of customerOperations) expect(operation.role, operation.operationId).to.equal(undefined);
    });

    for (const operation of adminOperations) {
      const required = operation.role as OperatorRole;
      describe(`${operation.method} ${operation.path} (${operation.operationId}, role ${required})`, () => {
        it("answers 401 without a token, to a wrong token, a customer key, an unknown operator token and a revoked operator's token", async () => {
          for (const auth of [undefined, 'not-the-admin-token', tenant.key, generateOperatorToken(), revokedOperator]) {
            expectUnauthenticated(await request(operation, { auth }));
          }
        });

        for (const role of OPERATOR_ROLES) {
          const allowed = roleAllows(role, required);
          it(
            allowed
              ? `lets a ${role} operator past authorization`
              : `answers 403 forbidden naming the required role to a ${role} operator, whatever the request holds`,
            async () => {
              const response = await request(operation, { auth: tokens[role] });
              if (allowed) expect(response.status, JSON.stringify(response.body)).to.not.be.oneOf([401, 403]);
              else {
                expectError(response, 403, 'forbidden');
                expect(response.body.error.type).to.equal('authorization_error');
                expect(response.body.error.details).to.deep.equal({ required_role: required });
              }
            },
          );
        }
      });
    }
  });
});

/** What a request to POST /api-keys/create asks beyond the calling key, for each field of the document's request schema. */
const broaderAsks: Record<string, { ask: Record<string, unknown>; param: string }[]> = {
  permissions: [{ ask: { permissions: ['sms:read', 'sms:bulk'] }, param: 'permissions' }],
  rate_limit: [{ ask: { rate_limit: 6000 }, param: 'rate_limit' }],
  daily_limit: [
    { ask: { daily_limit: null }, param: 'daily_limit' },
    { ask: { daily_limit: 2 }, param: 'daily_limit' },
  ],
  monthly_limit: [
    { ask: { monthly_limit: null }, param: 'monthly_limit' },
    { ask: { monthly_limit: 31 }, param: 'monthly_limit' },
  ],
  allowed_ips: [
    { ask: { allowed_ips: null }, param: 'allowed_ips' },
    { ask: { allowed_ips: ['127.0.0.0/8'] }, param: 'allowed_ips[0]' },
    { ask: { allowed_ips: ['127.0.0.1', '10.0.0.1'] }, param: 'allowed_ips[1]' },
    { ask: { allowed_ips: ['0.0.0.0/0'] }, param: 'allowed_ips[0]' },
  ],
  expires_at: [
    { ask: { expires_at: null }, param: 'expires_at' },
    { ask: { expires_at: new Date(Date.now() + 86_400_000).toISOString() }, param: 'expires_at' },
  ],
};

describe('a key minting a broader key', () => {
  const schema = (yaml.load(readFileSync(DEFINITION_PATH, 'utf8')) as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } })
    .components.schemas.CreateApiKeyRequest;
  const fields = Object.keys(schema.properties).filter((field) => field !== 'name');
  let tenant: Tenant;

  before(async () => {
    tenant = await createTenant();
  });

  it('has a broader ask for every field of CreateApiKeyRequest but name', () => {
    expect(Object.keys(broaderAsks).sort()).to.deep.equal([...fields].sort());
  });

  for (const field of fields) {
    for (const { ask, param } of broaderAsks[field] ?? []) {
      it(`is refused 403 naming ${param} when asking ${JSON.stringify(ask)}, and creates nothing`, async () => {
        // The issue's key: keys:write, a daily limit of 1, a rate limit of 5, a one-hour expiry and an IP lock.
        const creator = await createAdminKey(tenant.accountId, {
          name: `Creator of ${param}`,
          permissions: ['keys:write', 'sms:read', 'sms:send'],
          rate_limit: 5,
          daily_limit: 1,
          monthly_limit: 30,
          allowed_ips: ['127.0.0.1'],
          expires_at: new Date(Date.now() + 3_600_000).toISOString(),
        });
        const name = `Broader ${param} ${JSON.stringify(ask)}`;
        const response = await call('POST', '/api-keys/create', { auth: creator.plain_key, body: { name, permissions: ['sms:read'], ...ask } });
        expectError(response, 403, 'forbidden', param);
        expect(response.body.error.type).to.equal('authorization_error');
        expect(response.body.error.details!.reason).to.equal('broader_than_calling_key');
        expect(await harness.db('api_keys').where({ account_id: tenant.accountId, name })).to.have.length(0);
      });
    }
  }
});
