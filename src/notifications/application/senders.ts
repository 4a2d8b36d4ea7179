import { createHmac } from 'node:crypto';
import nodemailer, { type Transporter } from 'nodemailer';
import { Agent, type Dispatcher } from 'undici';
import { createGuardedConnector, type Resolver } from '../../probing/prober/address-guard.js';
import { transportFailureReason } from '../../probing/domain/failure-reason.js';
import { PAGERDUTY_EVENTS_URL, signingSecrets, type Channel } from '../domain/channel.js';
import { DELIVERY_TIMEOUT_MS, type AttemptOutcome } from '../domain/delivery.js';
import { discordMessage, emailMessage, messageFacts, pagerdutyEvents, slackMessage, type WebhookPayload } from '../domain/formats.js';

export interface SenderOptions {
  /** PROBE_BLOCK_PRIVATE: channel URLs pass the probes' address guard. */
  blockPrivate: boolean;
  smtpUrl: string | null;
  emailFrom: string;
  timeoutMs?: number;
  resolve?: Resolver;
}

export interface Outgoing {
  deliveryId: string;
  channel: Channel;
  payload: WebhookPayload;
  endpointNames: Map<number, string>;
}

const MAX_SOCKETS_PER_ORIGIN = 4;
/** Bound of the per-process caches of decoded secrets and parsed channel URLs. */
const MAX_CACHED = 10_000;
const SECRET_PREFIX = 'whsec_';

/**
 * Sends one attempt of one delivery: POSTs through undici with the probes' address guard, or
 * mail through nodemailer. Answers what happened, in words that name the host at most, never the
 * URL (its path and query are credentials).
 */
export class Senders {
  private readonly agent: Agent;
  private mailer: Transporter | null = null;
  private readonly timeoutMs: number;
  /** Decoded signing keys by secret: decoding is per secret, not per delivery. */
  private readonly keys = new Map<string, Buffer>();
  /** Parsed channel URLs (parsed once per URL, not once per request). */
  private readonly targets = new Map<string, URL>();

  constructor(private readonly options: SenderOptions) {
    this.timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    this.agent = new Agent({
      connect: createGuardedConnector({ blockPrivate: options.blockPrivate, resolve: options.resolve, connectTimeoutMs: this.timeoutMs }),
      connections: MAX_SOCKETS_PER_ORIGIN,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
    });
  }

  async send(out: Outgoing): Promise<AttemptOutcome> {
    const { channel, payload } = out;
    const facts = () => messageFacts(payload, out.endpointNames);
    switch (channel.kind) {
      case 'webhook':
        return this.webhook(out);
      case 'slack':
        return this.post(channel.config.url!, JSON.stringify(slackMessage(facts())), {});
      case 'discord':
        return this.post(channel.config.url!, JSON.stringify(discordMessage(facts())), {});
      case 'pagerduty':
        return this.postEach(channel.config.url ?? PAGERDUTY_EVENTS_URL, pagerdutyEvents(payload, facts(), channel.config.routing_key ?? '', out.deliveryId));
      case 'email':
        return this.email(channel.config.to ?? [], emailMessage(facts()));
    }
  }

  /**
   * Standard Webhooks v1: `webhook-id` is the delivery id; one signature per active secret,
   * `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body` under the secret's decoded bytes
   * (node:crypto; the tests verify it with the `standardwebhooks` package).
   */
  private webhook({ deliveryId, channel, payload }: Outgoing): Promise<AttemptOutcome> {
    const body = JSON.stringify(payload);
    const nowMs = Date.now();
    const timestamp = String(Math.floor(nowMs / 1000));
    const signature = signingSecrets(channel, nowMs)
      .map((secret) => `v1,${createHmac('sha256', this.key(secret)).update(`${deliveryId}.${timestamp}.${body}`).digest('base64')}`)
      .join(' ');
    return this.post(channel.config.url!, body, { 'webhook-id': deliveryId, 'webhook-timestamp': timestamp, 'webhook-signature': signature });
  }

  private key(secret: string): Buffer {
    return cached(this.keys, secret, () => Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64'));
  }

  /** Bodies one after another; the attempt is the first that fails, else the last. */
  private async postEach(url: string, bodies: object[]): Promise<AttemptOutcome> {
    let outcome: AttemptOutcome | undefined;
    for (const body of bodies) {
      outcome = await this.post(url, JSON.stringify(body), {});
      if (!outcome.delivered) return outcome;
    }
    return outcome!;
  }

  private post(url: string, body: string, headers: Record<string, string>): Promise<AttemptOutcome> {
    const target = cached(this.targets, url, () => new URL(url));
    return new Promise<AttemptOutcome>((resolve) => {
      const exchange = new Exchange(target, this.timeoutMs, resolve);
      this.agent.dispatch(
        {
          origin: target.origin,
          path: `${target.pathname}${target.search}`,
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...headers },
        },
        exchange,
      );
    });
  }

  private async email(to: string[], message: { subject: string; text: string }): Promise<AttemptOutcome> {
    if (!this.options.smtpUrl) return { delivered: false, status: null, error: 'email: SMTP_URL is not set on the server' };
    this.mailer ??= nodemailer.createTransport({
      url: this.options.smtpUrl,
      connectionTimeout: this.timeoutMs,
      greetingTimeout: this.timeoutMs,
      socketTimeout: this.timeoutMs,
    } as unknown as Parameters<typeof nodemailer.createTransport>[0]);
    try {
      await this.mailer.sendMail({ from: this.options.emailFrom, to, subject: message.subject, text: message.text });
      return { delivered: true, status: null, error: null };
    } catch (error) {
      const code = (error as { responseCode?: number; code?: string }) ?? {};
      return { delivered: false, status: null, error: `email: the SMTP server refused or failed (${code.responseCode ?? code.code ?? 'error'})` };
    }
  }

  /** Cuts off every request under way (shutdown). */
  async abort(): Promise<void> {
    await this.agent.destroy().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.mailer?.close();
    await this.agent.close().catch(() => undefined);
  }
}

const USER_AGENT = 'http-monitor-notifications/1';
/** Response bodies are read up to this much, then the exchange is cut off (only the status matters). */
const RESPONSE_BODY_LIMIT = 64 * 1024;

/**
 * One POST through undici's dispatcher API, answering its outcome once. Why not `request`: the
 * outcome needs only the status, and `request` builds a readable stream, a promise chain and
 * an abort signal for each call (about 12 us of CPU, a third of a POST to a local receiver).
 *
 * One deadline covers the whole exchange: connect, headers and body. The response body is
 * drained, not kept, and cut off past RESPONSE_BODY_LIMIT.
 */
class Exchange implements Dispatcher.DispatchHandler {
  private status: number | null = null;
  private received = 0;
  private controller: Dispatcher.DispatchController | null = null;
  private settled = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly target: URL,
    private readonly timeoutMs: number,
    private readonly answer: (outcome: AttemptOutcome) => void,
  ) {
    this.timer = setTimeout(() => this.timedOut(), timeoutMs);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.settled) controller.abort(new Error('deadline passed before the request was sent'));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    this.status = statusCode;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.received += chunk.length;
    if (this.received <= RESPONSE_BODY_LIMIT) return;
    this.finish();
    controller.abort(new Error('response body over the limit'));
  }

  onResponseEnd(): void {
    this.finish();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.settled) return;
    const port = Number(this.target.port || (this.target.protocol === 'https:' ? 443 : 80));
    this.settle({ delivered: false, status: null, error: transportFailureReason(error, { host: this.target.hostname, port }) });
  }

  private finish(): void {
    const status = this.status ?? 0;
    const delivered = status >= 200 && status < 300;
    this.settle({ delivered, status, error: delivered ? null : `status: ${status}` });
  }

  private timedOut(): void {
    if (this.settled) return;
    this.settle({ delivered: false, status: null, error: `timeout: ${this.target.host} did not answer within ${this.timeoutMs / 1000} s` });
    this.controller?.abort(new Error('deadline passed'));
  }

  private settle(outcome: AttemptOutcome): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.answer(outcome);
  }
}

/** The cached value for `key`, made once; the cache is emptied when it reaches its bound. */
function cached<V>(cache: Map<string, V>, key: string, make: () => V): V {
  let value = cache.get(key);
  if (value === undefined) {
    if (cache.size >= MAX_CACHED) cache.clear();
    value = make();
    cache.set(key, value);
  }
  return value;
}
