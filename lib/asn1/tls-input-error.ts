/**
 * A kubernetes.io/tls input the driver cannot convert (not PEM or PKCS#12, a key type
 * upstream does not write, an encrypted key). Its message describes the structure,
 * never the bytes, so it can go into events and logs; the caller adds the Secret's
 * and object's names.
 */
export class TlsInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TlsInputError';
  }
}
