import { expect } from 'chai';
import { call } from './client.ts';
import { harness } from './harness.ts';

export const metricsUrl = (baseUrl: string) => `${baseUrl.replace('/api/v1', '')}/metrics`;

/** GET /metrics of an instance (the harness's by default), checked to answer Prometheus text. */
export const scrape = async (baseUrl = harness.baseUrl, token?: string) => {
  const response = await fetch(metricsUrl(baseUrl), token ? { headers: { authorization: `Bearer ${token}` } } : {});
  expect(response.status).to.equal(200);
  expect(response.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
  return response.text();
};

/** The value of one sample line, e.g. `name{a="b"} 3`, or undefined when absent. */
export const sample = (text: string, pattern: RegExp): number | undefined => {
  const line = text.split('\n').find((l) => pattern.test(l));
  return line === undefined ? undefined : Number(line.split(' ').pop());
};

/** Metrics label routes by name. */
export const routeName = async (id: number, baseUrl?: string): Promise<string> =>
  (await call('GET', `/admin/routes/${id}`, { auth: 'admin', baseUrl })).body.data.name;
