import { expect } from 'chai';
import { overreach, type KeyGrant } from '../../domain/key-reach.ts';

const holder: KeyGrant = {
  permissions: ['sms:send', 'sms:read'],
  rate_limit: 10,
  daily_limit: 5,
  monthly_limit: null,
  allowed_ips: ['10.0.0.0/24', '10.0.1.0/24', '192.0.2.7'],
  expires_at: new Date('2030-01-01T00:00:00Z'),
};

const within = (changes: Partial<KeyGrant>) => overreach({ ...holder, ...changes }, holder);

describe('overreach: whether one key is broader than another', () => {
  it('finds a key identical to its holder within it', () => {
    expect(within({})).to.equal(null);
  });

  it('lets a missing cap of the holder allow any value, and a missing cap of the grant exceed any', () => {
    expect(within({ monthly_limit: 1_000_000 })).to.equal(null);
    expect(within({ daily_limit: null })?.param).to.equal('daily_limit');
    expect(within({ expires_at: null })?.param).to.equal('expires_at');
    expect(within({ allowed_ips: null })?.param).to.equal('allowed_ips');
  });

  it("covers a range only the holder's entries together cover, and a non-aligned CIDR by its whole network", () => {
    expect(within({ allowed_ips: ['10.0.0.0/23'] })).to.equal(null);
    expect(within({ allowed_ips: ['10.0.1.77/24', '192.0.2.7/32'] })).to.equal(null);
    expect(within({ allowed_ips: ['10.0.0.0/22'] })?.param).to.equal('allowed_ips[0]');
    expect(within({ allowed_ips: ['192.0.2.7', '192.0.2.6/31'] })?.param).to.equal('allowed_ips[1]');
    expect(within({ allowed_ips: ['0.0.0.0/0'] })?.param).to.equal('allowed_ips[0]');
    expect(overreach({ ...holder, allowed_ips: ['255.255.255.255'] }, { ...holder, allowed_ips: ['0.0.0.0/0'] })).to.equal(null);
  });

  it('names scopes the holder lacks', () => {
    expect(within({ permissions: ['sms:read', 'keys:write'] })).to.deep.include({ param: 'permissions', details: { scopes: ['keys:write'] } });
  });
});
