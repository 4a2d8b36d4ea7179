import nodemailer, { type Transporter } from 'nodemailer';
import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';
import { createGuardedConnector, type Resolver } from '../../probing/prober/address-guard.js';
import { transportFailureReason } from '../../probing/domain/failure-reason.js';
import { PAGERDUTY_EVENTS_URL, signingSecrets, type Channel } from '../domain/channel.js';
import { DELIVERY_TIMEOUT_MS, type AttemptOutcome } from '../domain/delivery.js';
import { discordMessage, emailMessage, messageFacts, pagerdutyEvent, slackMessage, type WebhookPayload } from '../domain/formats.js';

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

/**
 * Sends one attempt of one delivery: POSTs through undici with the probes' address guard, or
 * mail through nodemailer. Answers what happened, in words that name the host at most, never the
 * URL (its path and query are credentials).
 */
export class Senders {
  private readonly agent: Agent;
  private mailer: Transporter | null = null;
  private readonly timeoutMs: number;
  private readonly signers = new Map<string, Webhook>();

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
        return this.post(channel.config.url ?? PAGERDUTY_EVENTS_URL, JSON.stringify(pagerdutyEvent(payload, facts(), channel.config.routing_key ?? '', out.deliveryId)), {});
      case 'email':
        return this.email(channel.config.to ?? [], emailMessage(facts()));
    }
  }

  /** Standard Webhooks v1: `webhook-id` is the delivery id; one signature per active secret. */
  private webhook({ deliveryId, channel, payload }: Outgoing): Promise<AttemptOutcome> {
    const body = JSON.stringify(payload);
    const now = new Date();
    const signature = signingSecrets(channel, now.getTime())
      .map((secret) => this.signer(secret).sign(deliveryId, now, body))
      .join(' ');
    return this.post(channel.config.url!, body, {
      'webhook-id': deliveryId,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': signature,
    });
  }

  /** One signer per secret (decoding the secret is per signer, not per delivery). */
  private signer(secret: string): Webhook {
    let signer = this.signers.get(secret);
    if (!signer) {
      if (this.signers.size >= 10_000) this.signers.clear();
      signer = new Webhook(secret);
      this.signers.set(secret, signer);
    }
    return signer;
  }

  private async post(url: string, body: string, headers: Record<string, string>): Promise<AttemptOutcome> {
    const target = new URL(url);
    const port = Number(target.port || (target.protocol === 'https:' ? 443 : 80));
    // One deadline for the whole exchange: connect, headers and body within the timeout.
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new DOMException('deadline', 'TimeoutError')), this.timeoutMs);
    try {
      const response = await request(target, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'user-agent': 'http-monitor-notifications/1', ...headers },
        dispatcher: this.agent,
        signal: deadline.signal,
      });
      await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      const status = response.statusCode;
      const delivered = status >= 200 && status < 300;
      return { delivered, status, error: delivered ? null : `status: ${status}` };
    } catch (error) {
      const name = (error as { name?: string } | null)?.name;
      if (name === 'TimeoutError' || name === 'AbortError') {
        return { delivered: false, status: null, error: `timeout: ${target.host} did not answer within ${this.timeoutMs / 1000} s` };
      }
      return { delivered: false, status: null, error: transportFailureReason(error, { host: target.hostname, port }) };
    } finally {
      clearTimeout(timer);
    }
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
