import { expect } from 'chai';
import { BASE62, newId, randomBase62 } from '../../domain/ids.ts';

describe('ids', () => {
  it('draws distinct base62 ids of the asked length across many refills of the random pool', () => {
    // 10,000 ids of 24 characters take about 250,000 random bytes: some 60 refills of the 4 KiB pool.
    const ids = Array.from({ length: 10_000 }, () => newId('msg'));
    expect(new Set(ids).size).to.equal(ids.length);
    for (const id of ids) expect(id).to.match(/^msg_[0-9A-Za-z]{24}$/);
    const long = randomBase62(5_000);
    expect(long).to.have.length(5_000);
    // Every one of the 62 characters appears in 5,000 uniform draws (each is missing with probability about 1e-35).
    expect(new Set(long).size).to.equal(BASE62.length);
  });
});
