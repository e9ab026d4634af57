import { expect } from 'chai';
import { loadConfig } from '../../app/config.ts';

describe('configuration', () => {
  it('has the operator contract defaults', () => {
    const config = loadConfig({});
    expect(config).to.include({ port: 3000, host: '127.0.0.1', dataDir: '.data', webhookTimeoutMs: 10000, webhookDisableAfter: 25, trustProxy: false, logLevel: 'info', logFormat: 'json', databaseConnectTimeoutSeconds: 60, metricsToken: undefined });
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
  ];
  for (const [name, value, message] of bad) {
    it(`stops with a message naming ${name} when it is '${value}'`, () => {
      expect(() => loadConfig({ [name]: value })).to.throw(message);
    });
  }

  it('reads a shortened retry schedule', () => {
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '0, 1,2' }).webhookRetrySchedule).to.deep.equal([0, 1, 2]);
  });
});
