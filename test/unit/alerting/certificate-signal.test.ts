/**
 * The certificate signal (issue 26 item 4), given checks, when a check with a certificate
 * expiry is recorded, then the signal events.
 */
import {
  alertStatusView,
  type AlertSignalTriggeredData,
  type RecordCheckCommand,
} from '../../../src/alerting/domain/endpoint-alerts.js';
import { DEFAULT_LATENCY_SETTINGS } from '../../../src/monitoring/domain/endpoint-configuration.js';
import { command, last, run, signalEvents, type CheckSpec } from './support.js';

const DAY = 86_400_000;

/** A check whose server certificate expires `days` after the check was taken. */
function withCertificate(days: number | null, spec: CheckSpec = {}, threshold?: number): RecordCheckCommand {
  const cmd = command(spec);
  if (threshold !== undefined) cmd.settings = { ...cmd.settings, certificate_expiry_days: threshold };
  if (days === null) return cmd;
  const expiresAt = new Date(Date.parse(cmd.outcome.checked_at) + days * DAY).toISOString();
  return { ...cmd, outcome: { ...cmd.outcome, certificate_expires_at: expiresAt } };
}

describe('certificate signal (default threshold 14 days)', () => {
  it('given a certificate valid for 90 days, nothing triggers and alert status lists it as ok with its expiry', () => {
    const steps = run([withCertificate(90)]);
    expect(signalEvents(steps)).toEqual([]);
    const view = alertStatusView(last(steps).state, { team_id: 1, endpoint_id: 7 }, DEFAULT_LATENCY_SETTINGS);
    expect(view.signals.map((s) => s.type)).toEqual(['availability', 'latency', 'certificate']);
    expect(view.signals[2]).toMatchObject({ state: 'ok', expires_at: steps[0].command.outcome.certificate_expires_at });
  });

  it('when a check sees a certificate expiring in 5 days, the signal triggers naming the expiry and the threshold', () => {
    const steps = run([withCertificate(90), withCertificate(5)]);
    expect(signalEvents(steps)).toEqual(['1:AlertSignalTriggered:certificate']);
    const data = last(steps).events[1].data as AlertSignalTriggeredData;
    expect(data).toMatchObject({ signal: 'certificate', expires_at: steps[1].command.outcome.certificate_expires_at, threshold_days: 14 });
    const view = alertStatusView(last(steps).state, { team_id: 1, endpoint_id: 7 }, DEFAULT_LATENCY_SETTINGS);
    expect(view.signals[2]).toMatchObject({ type: 'certificate', state: 'triggered', expires_at: data.expires_at });
  });

  it('triggers once: further checks with the same certificate change nothing', () => {
    const steps = run([withCertificate(5), withCertificate(5), withCertificate(4)]);
    expect(signalEvents(steps)).toEqual(['0:AlertSignalTriggered:certificate']);
  });

  it('a check without a certificate (a failed handshake) leaves a triggered signal triggered', () => {
    const steps = run([withCertificate(5), withCertificate(null, { success: false })]);
    expect(signalEvents(steps)).toEqual(['0:AlertSignalTriggered:certificate']);
  });

  it('recovers when a later check sees a certificate valid beyond the threshold', () => {
    const steps = run([withCertificate(5), withCertificate(365)]);
    expect(signalEvents(steps)).toEqual(['0:AlertSignalTriggered:certificate', '1:AlertSignalRecovered:certificate']);
  });

  it('follows the endpoint threshold: 30 days triggers on 20 days left, 0 turns it off (and recovers)', () => {
    expect(signalEvents(run([withCertificate(20, {}, 30)]))).toEqual(['0:AlertSignalTriggered:certificate']);
    expect(signalEvents(run([withCertificate(20)]))).toEqual([]);
    expect(signalEvents(run([withCertificate(1, {}, 0)]))).toEqual([]);
    expect(signalEvents(run([withCertificate(5), withCertificate(5, {}, 0)]))).toEqual([
      '0:AlertSignalTriggered:certificate',
      '1:AlertSignalRecovered:certificate',
    ]);
  });

  it('manual and suppressed checks never move it', () => {
    expect(signalEvents(run([withCertificate(5, { source: 'manual' }), withCertificate(5, { alert_suppressed: true })]))).toEqual([]);
  });

  it('an http endpoint (no certificate ever) lists only availability and latency', () => {
    const steps = run([withCertificate(null)]);
    const view = alertStatusView(last(steps).state, { team_id: 1, endpoint_id: 7 }, DEFAULT_LATENCY_SETTINGS);
    expect(view.signals.map((s) => s.type)).toEqual(['availability', 'latency']);
  });
});
