import assert from 'node:assert/strict';
import fc from 'fast-check';
import { addPeriod, cancellationPolicy, isDay } from '../../domain/cancellation';

describe('cancellation policy', () => {
  const billed = { noticePeriod: 'P1M', initialPeriod: 'P1M', billingStart: '2026-01-10' };

  it('moves days on by ISO 8601 periods, clamping to the end of shorter months', () => {
    assert.equal(addPeriod('2026-01-31', 'P1M'), '2026-02-28');
    assert.equal(addPeriod('2028-01-31', 'P1M'), '2028-02-29');
    assert.equal(addPeriod('2026-11-23', 'P14D'), '2026-12-07');
    assert.equal(addPeriod('2026-11-23', 'P1Y2W'), '2027-12-07');
    assert.equal(addPeriod('2026-11-23', 'P0D'), '2026-11-23');
    assert.equal(addPeriod('2026-11-23', null), '2026-11-23');
  });

  it('tells real calendar days from look-alikes', () => {
    assert.ok(isDay('2028-02-29'));
    assert.ok(!isDay('2026-02-29'));
    assert.ok(!isDay('2026-13-01'));
    assert.ok(!isDay('26-01-01'));
  });

  it('goes no earlier than the notice period allows, charging to the end of that month', () => {
    assert.deepEqual(cancellationPolicy(billed, '2026-11-23'), {
      decommission_at: '2026-12-23',
      charged_until: '2026-12-31',
      tooEarly: false,
    });
    assert.equal(cancellationPolicy(billed, '2026-11-23', '2026-12-01').tooEarly, true);
    assert.deepEqual(cancellationPolicy(billed, '2026-11-23', '2027-03-05'), {
      decommission_at: '2027-03-05',
      charged_until: '2027-03-31',
      tooEarly: false,
    });
  });

  it('charges the whole minimum term even when cancelled early in it', () => {
    const yearly = { noticePeriod: 'P0D', initialPeriod: 'P12M', billingStart: '2026-11-01' };
    assert.deepEqual(cancellationPolicy(yearly, '2026-11-23'), {
      decommission_at: '2026-11-23',
      charged_until: '2027-10-31',
      tooEarly: false,
    });
  });

  it('lets what never went into production go at once, free of charge', () => {
    const never = { ...billed, billingStart: null };
    assert.deepEqual(cancellationPolicy(never, '2026-11-23'), {
      decommission_at: '2026-11-23',
      charged_until: '2026-11-23',
      tooEarly: false,
    });
    assert.equal(cancellationPolicy(never, '2026-11-23', '2026-11-01').tooEarly, true);
  });

  it('goes no earlier than the resources relying on it, which are going already', () => {
    // The configs on a connection go on 2027-01-15: the connection's notice would let it go sooner.
    const carrying = { ...billed, notBefore: '2027-01-15' };
    assert.deepEqual(cancellationPolicy(carrying, '2026-11-23'), {
      decommission_at: '2027-01-15',
      charged_until: '2027-01-31',
      tooEarly: false,
    });
    assert.equal(cancellationPolicy(carrying, '2026-11-23', '2027-01-14').tooEarly, true);
    assert.equal(cancellationPolicy(carrying, '2026-11-23', '2027-01-15').tooEarly, false);
    // Their day before the notice period's end changes nothing.
    assert.deepEqual(cancellationPolicy({ ...billed, notBefore: '2026-11-25' }, '2026-11-23'), {
      decommission_at: '2026-12-23',
      charged_until: '2026-12-31',
      tooEarly: false,
    });
    const never = { ...billed, billingStart: null, notBefore: '2026-11-30' };
    assert.deepEqual(cancellationPolicy(never, '2026-11-23'), {
      decommission_at: '2026-11-30',
      charged_until: '2026-11-23',
      tooEarly: false,
    });
    assert.equal(cancellationPolicy(never, '2026-11-23', '2026-11-24').tooEarly, true);
  });

  it('never decommissions before the charged period ends, for any day and notice', () => {
    const day = fc
      .date({ min: new Date('2020-01-01'), max: new Date('2035-12-31'), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10));
    fc.assert(
      fc.property(day, day, fc.integer({ min: 0, max: 90 }), (start, today, notice) => {
        const policy = cancellationPolicy(
          { noticePeriod: `P${notice}D`, initialPeriod: 'P1M', billingStart: start },
          today,
        );
        assert.ok(policy.charged_until >= policy.decommission_at);
        assert.ok(policy.decommission_at >= today);
        assert.equal(policy.decommission_at, addPeriod(today, `P${notice}D`));
      }),
    );
  });
});
