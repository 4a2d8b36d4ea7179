/**
 * Ed25519 signatures over audit export manifests (docs/audit.md). The private key is an Ed25519
 * key in PEM (PKCS #8, as `openssl genpkey -algorithm ed25519` writes it); its key id is the
 * lowercase hex SHA-256 of the public key's DER (SubjectPublicKeyInfo), which
 * `openssl pkey -pubin -outform DER | openssl dgst -sha256` gives too. A rotated key gets a new
 * id, so each export names the key that signed it. The private key never leaves this module's
 * KeyObject: nothing here returns, prints or serializes it.
 */
import { createHash, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

export class SigningKeyError extends Error {}

export interface AuditSigner {
  /** Hex SHA-256 of the public key's DER. */
  readonly keyId: string;
  /** The public key, PEM (SubjectPublicKeyInfo). */
  readonly publicKeyPem: string;
  /** Base64 Ed25519 signature of the bytes. */
  sign(bytes: Buffer): string;
}

/** PEM text as an environment variable may hold it: real newlines, or `\n` escapes on one line. */
function pemText(pem: string): string {
  return pem.includes('\\n') ? pem.replace(/\\n/g, '\n') : pem;
}

/** The signer of an Ed25519 private key in PEM; throws SigningKeyError (never quoting the key) otherwise. */
export function auditSigner(privateKeyPem: string): AuditSigner {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pemText(privateKeyPem), format: 'pem' });
  } catch {
    throw new SigningKeyError('is not a private key in PEM');
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new SigningKeyError(`must be an Ed25519 key, got ${key.asymmetricKeyType ?? 'an unknown type'}`);
  const publicKey = createPublicKey(key);
  return {
    keyId: keyIdOf(publicKey),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    sign: (bytes) => sign(null, bytes, key).toString('base64'),
  };
}

export function keyIdOf(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex');
}

/** An Ed25519 public key from PEM (SubjectPublicKeyInfo); a private key in PEM gives its public half. */
export function auditPublicKey(pem: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey({ key: pemText(pem), format: 'pem' });
  } catch {
    throw new SigningKeyError('is not a public key in PEM');
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new SigningKeyError(`must be an Ed25519 key, got ${key.asymmetricKeyType ?? 'an unknown type'}`);
  return key;
}

export function signatureHolds(publicKey: KeyObject, bytes: Buffer, signatureBase64: string): boolean {
  try {
    return verify(null, bytes, publicKey, Buffer.from(signatureBase64, 'base64'));
  } catch {
    return false;
  }
}
