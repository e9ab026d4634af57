import { expect } from 'chai';
import { loadConfig } from '../../app/config.ts';

describe('configuration', () => {
  it('has the operator contract defaults', () => {
    const config = loadConfig({});
    expect(config).to.include({
      role: 'all',
      port: 3000,
      host: '127.0.0.1',
      dataDir: '.data',
      webhookTimeoutMs: 10000,
      webhookDisableAfter: 25,
      trustProxy: false,
      logLevel: 'info',
      logFormat: 'json',
      databaseConnectTimeoutSeconds: 60,
      metricsToken: undefined,
    });
    expect(config.webhookRetrySchedule).to.deep.equal([0, 30, 300, 1800, 7200, 43200]);
    expect(config.databaseUrl).to.equal(undefined);
    expect(config.adminToken).to.equal(undefined);
    expect(config.publicUrl, 'derived from the listening address').to.equal(undefined);
  });

  it('allows private webhook URLs by default only in embedded mode', () => {
    expect(loadConfig({}).webhookAllowPrivateUrls).to.equal(true);
    expect(loadConfig({ DATABASE_URL: 'postgres://localhost/dispatch' }).webhookAllowPrivateUrls).to.equal(false);
  });

  const bad: [string, string, RegExp][] = [
    ['PORT', 'eighty', /^PORT must be an integer/],
    ['PORT', '70000', /^PORT must be an integer from 0 to 65535/],
    ['DATABASE_URL', 'mysql://x', /^DATABASE_URL must use postgres/],
    ['PUBLIC_URL', 'not a url', /^PUBLIC_URL must be a URL/],
    ['WEBHOOK_RETRY_SCHEDULE', '0,30,soon', /^WEBHOOK_RETRY_SCHEDULE must be/],
    ['WEBHOOK_TIMEOUT_MS', '-1', /^WEBHOOK_TIMEOUT_MS must be/],
    ['WEBHOOK_ALLOW_PRIVATE_URLS', 'yes', /^WEBHOOK_ALLOW_PRIVATE_URLS must be 'true' or 'false'/],
    ['TRUST_PROXY', '1', /^TRUST_PROXY must be/],
    ['LOG_LEVEL', 'loud', /^LOG_LEVEL must be one of/],
    ['ADMIN_TOKEN', 'short', /^ADMIN_TOKEN must be at least 16/],
    ['LOG_FORMAT', 'xml', /^LOG_FORMAT must be 'json' or 'pretty'/],
    ['METRICS_TOKEN', 'short', /^METRICS_TOKEN must be at least 16/],
    ['DATABASE_CONNECT_TIMEOUT_SECONDS', 'forever', /^DATABASE_CONNECT_TIMEOUT_SECONDS must be an integer from 0 to 3600/],
    ['DISPATCH_ROLE', 'web', /^DISPATCH_ROLE must be one of all, api, worker, got 'web'/],
  ];
  for (const [name, value, message] of bad) {
    it(`stops with a message naming ${name} when it is '${value}'`, () => {
      expect(() => loadConfig({ [name]: value })).to.throw(message);
    });
  }

  it("splits roles only on a shared server, and a worker only when it knows the API's public address", () => {
    const database = { DATABASE_URL: 'postgres://localhost/dispatch' };
    expect(() => loadConfig({ DISPATCH_ROLE: 'api' })).to.throw(/^DISPATCH_ROLE=api needs DATABASE_URL/);
    expect(() => loadConfig({ ...database, DISPATCH_ROLE: 'worker' })).to.throw(/^DISPATCH_ROLE=worker needs PUBLIC_URL/);
    expect(loadConfig({ ...database, DISPATCH_ROLE: 'api' }).role).to.equal('api');
    expect(loadConfig({ ...database, DISPATCH_ROLE: 'worker', PUBLIC_URL: 'https://sms.example.com' })).to.include({
      role: 'worker',
      publicUrl: 'https://sms.example.com',
    });
  });

  it('reads a shortened retry schedule', () => {
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '0, 1,2' }).webhookRetrySchedule).to.deep.equal([0, 1, 2]);
  });
});
