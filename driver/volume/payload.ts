/** One file of a volume payload: its mode bits and bytes. */
export interface PayloadFile {
  readonly mode: number;
  readonly contents: Buffer;
}

/** What a volume holds: clean relative paths mapped to files. */
export type Payload = ReadonlyMap<string, PayloadFile>;

/** An object and the version the provider reported for it. */
export interface ObjectVersion {
  readonly id: string;
  readonly version: string;
}
