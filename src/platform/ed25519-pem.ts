import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';

/** PEM text as an environment variable may hold it: real newlines, or `\n` escapes on one line. */
export function pemText(pem: string): string {
  return pem.includes('\\n') ? pem.replace(/\\n/g, '\n') : pem;
}

/**
 * An Ed25519 key read from PEM (`private`: PKCS #8; `public`: SubjectPublicKeyInfo, or a private
 * key's public half), or why not: the text is no such key in PEM, or the key is of another type.
 * Read by the configuration (AUDIT_SIGNING_KEY) and by audit signing, each wording its refusal;
 * neither quotes the key.
 */
export type Ed25519Read = { key: KeyObject } | { problem: 'not_pem' } | { problem: 'not_ed25519'; type: string | undefined };

export function readEd25519Pem(pem: string, kind: 'private' | 'public'): Ed25519Read {
  let key: KeyObject;
  try {
    const text = pemText(pem);
    key = kind === 'private' ? createPrivateKey({ key: text, format: 'pem' }) : createPublicKey({ key: text, format: 'pem' });
  } catch {
    return { problem: 'not_pem' };
  }
  return key.asymmetricKeyType === 'ed25519' ? { key } : { problem: 'not_ed25519', type: key.asymmetricKeyType };
}
