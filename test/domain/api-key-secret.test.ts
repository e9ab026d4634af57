import { expect } from 'chai';
import { generateApiKey, hashSecret, hashesEqual, isWellFormedApiKey, keyHint } from '../../domain/api-key-secret.ts';

describe('API key secrets', () => {
  it('makes keys of ds_live_, 43 random base62 characters and a 6-character checksum', () => {
    const key = generateApiKey();
    expect(key).to.match(/^ds_live_[0-9A-Za-z]{49}$/);
    expect(isWellFormedApiKey(key)).to.equal(true);
  });

  it('never makes the same key twice in a thousand', () => {
    const keys = new Set(Array.from({ length: 1000 }, generateApiKey));
    expect(keys.size).to.equal(1000);
  });

  it('refuses a key whose checksum does not match, so scanners can tell real keys from noise', () => {
    const key = generateApiKey();
    const flipped = key.slice(0, 20) + (key[20] === 'a' ? 'b' : 'a') + key.slice(21);
    expect(isWellFormedApiKey(flipped)).to.equal(false);
    expect(isWellFormedApiKey(`${key}x`)).to.equal(false);
    expect(isWellFormedApiKey(key.replace('ds_live_', 'ds_test_'))).to.equal(false);
  });

  it('hints a key as the prefix, its first four and last four characters', () => {
    const key = 'ds_live_AbCdEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvw';
    expect(keyHint(key)).to.equal('ds_live_AbCd...tuvw');
  });

  it('compares hashes in constant time and tells different keys apart', () => {
    const key = generateApiKey();
    expect(hashesEqual(hashSecret(key), hashSecret(key))).to.equal(true);
    expect(hashesEqual(hashSecret(key), hashSecret(generateApiKey()))).to.equal(false);
  });
});
