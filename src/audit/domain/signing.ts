/**
 * Ed25519 signatures over audit export manifests (docs/audit.md). The private key is an Ed25519
 * key in PEM (PKCS #8, as `openssl genpkey -algorithm ed25519` writes it); its key id is the
 * lowercase hex SHA-256 of the public key's DER (SubjectPublicKeyInfo), which
 * `openssl pkey -pubin -outform DER | openssl dgst -sha256` gives too. A rotated key gets a new
 * id, so each export names the key that signed it. The private key never leaves this module's
 * KeyObject: nothing here returns, prints or serializes it.
 */
import { createHash, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { readEd25519Pem } from '../../platform/ed25519-pem.js';

export class SigningKeyError extends Error {}

export interface AuditSigner {
  /** Hex SHA-256 of the public key's DER. */
  readonly keyId: string;
  /** The public key, PEM (SubjectPublicKeyInfo). */
  readonly publicKeyPem: string;
  /** Base64 Ed25519 signature of the bytes. */
  sign(bytes: Buffer): string;
}

/** The Ed25519 key of the PEM text; throws SigningKeyError (never quoting the key) when it is not one. */
function ed25519Key(pem: string, kind: 'private' | 'public'): KeyObject {
  const read = readEd25519Pem(pem, kind);
  if ('key' in read) return read.key;
  throw new SigningKeyError(read.problem === 'not_pem' ? `is not a ${kind} key in PEM` : `must be an Ed25519 key, got ${read.type ?? 'an unknown type'}`);
}

/** The signer of an Ed25519 private key in PEM; throws SigningKeyError (never quoting the key) otherwise. */
export function auditSigner(privateKeyPem: string): AuditSigner {
  const key = ed25519Key(privateKeyPem, 'private');
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
  return ed25519Key(pem, 'public');
}

export function signatureHolds(publicKey: KeyObject, bytes: Buffer, signatureBase64: string): boolean {
  try {
    return verify(null, bytes, publicKey, Buffer.from(signatureBase64, 'base64'));
  } catch {
    return false;
  }
}
