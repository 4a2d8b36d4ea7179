import { generateKeyPairSync } from 'node:crypto';
import { auditPublicKey, auditSigner, keyIdOf, signatureHolds, SigningKeyError } from '../../../src/audit/domain/signing.js';

const ed25519 = generateKeyPairSync('ed25519');
const privatePem = ed25519.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const publicPem = ed25519.publicKey.export({ type: 'spki', format: 'pem' }).toString();
const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
const rsaPrivatePem = rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const rsaPublicPem = rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString();

function refusal(read: () => unknown): SigningKeyError {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(SigningKeyError);
    return error as SigningKeyError;
  }
  throw new Error('expected a SigningKeyError');
}

describe('audit signing keys', () => {
  it('signs with an Ed25519 private key, given with real newlines or with \\n escapes on one line', () => {
    for (const pem of [privatePem, privatePem.replace(/\n/g, '\\n')]) {
      const signer = auditSigner(pem);
      expect(signer.keyId).toBe(keyIdOf(ed25519.publicKey));
      expect(signer.publicKeyPem).toBe(publicPem);
      const bytes = Buffer.from('manifest');
      expect(signatureHolds(auditPublicKey(publicPem), bytes, signer.sign(bytes))).toBe(true);
    }
  });

  it('reads a public key, or the public half of a private key', () => {
    expect(keyIdOf(auditPublicKey(publicPem))).toBe(keyIdOf(ed25519.publicKey));
    expect(keyIdOf(auditPublicKey(privatePem.replace(/\n/g, '\\n')))).toBe(keyIdOf(ed25519.publicKey));
  });

  it('refuses text that is no key in PEM, and keys of another type, without quoting them', () => {
    expect(refusal(() => auditSigner('not-a-key-but-a-secret')).message).toBe('is not a private key in PEM');
    expect(refusal(() => auditPublicKey('not-a-key-but-a-secret')).message).toBe('is not a public key in PEM');
    expect(refusal(() => auditSigner(rsaPrivatePem)).message).toBe('must be an Ed25519 key, got rsa');
    expect(refusal(() => auditPublicKey(rsaPublicPem)).message).toBe('must be an Ed25519 key, got rsa');
  });
});
