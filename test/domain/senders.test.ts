import { expect } from 'chai';
import { inferSenderType, senderIdProblem } from '../../domain/senders.ts';

describe('sender IDs', () => {
  const inferred: [string, string][] = [
    ['Dispatch', 'alphanumeric'],
    ['Shop 24', 'alphanumeric'],
    ['12345', 'short_code'],
    ['+447700900123', 'long_code'],
    ['447700900123', 'numeric'],
    ['12', 'numeric'],
  ];
  for (const [senderId, type] of inferred) {
    it(`infers '${senderId}' to be ${type}`, () => expect(inferSenderType(senderId)).to.equal(type));
  }

  it('refuses an alphanumeric sender ID longer than 11 characters, since it could never send', () => {
    expect(senderIdProblem('ABCDEFGHIJK', 'alphanumeric')).to.equal(null);
    expect(senderIdProblem('ABCDEFGHIJKL', 'alphanumeric')).to.match(/at most 11/);
  });

  it('refuses sender IDs that do not fit their declared type', () => {
    expect(senderIdProblem('12', 'short_code')).to.match(/3 to 8 digits/);
    expect(senderIdProblem('Shop', 'long_code')).to.match(/phone number/);
    expect(senderIdProblem('12a', 'numeric')).to.match(/only digits/);
    expect(senderIdProblem('1234', 'alphanumeric')).to.match(/at least one letter/);
  });
});
