import { expect } from 'chai';
import { fromUnits, hasAtMostFourDecimals, multiply, toAmount, toDecimal, toUnits } from '../../domain/money.ts';

describe('money', () => {
  it('adds exactly where binary floats do not', () => {
    expect(0.1 + 0.2).to.not.equal(0.3);
    expect(fromUnits(toUnits('0.1') + toUnits('0.2'))).to.equal('0.3000');
  });

  it('rounds half away from zero past four decimal places', () => {
    expect(toDecimal('1.00005')).to.equal('1.0001');
    expect(toDecimal('1.00004')).to.equal('1.0000');
    expect(toDecimal('-2.00005')).to.equal('-2.0001');
    expect(toDecimal(0.0075)).to.equal('0.0075');
  });

  it('multiplies a price by a segment count exactly', () => {
    expect(multiply('0.0075', 3)).to.equal('0.0225');
    expect(multiply('0.0075', 1000)).to.equal('7.5000');
  });

  it('answers stored amounts as numbers', () => {
    expect(toAmount('10.0000')).to.equal(10);
    expect(toAmount('0.0225')).to.equal(0.0225);
  });

  it('knows whether an amount has at most four decimal places', () => {
    expect(hasAtMostFourDecimals(12.3456)).to.equal(true);
    expect(hasAtMostFourDecimals(0.0075)).to.equal(true);
    expect(hasAtMostFourDecimals(1.23456)).to.equal(false);
  });
});
