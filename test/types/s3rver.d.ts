// The parts of s3rver (a local S3-compatible server, used by the tests) that we call.
declare module 's3rver' {
  type Options = { port?: number; address?: string; silent?: boolean; directory: string; configureBuckets?: { name: string }[] };
  export default class S3rver {
    constructor(options: Options);
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
  }
}
