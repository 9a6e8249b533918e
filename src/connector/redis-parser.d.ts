declare module "redis-parser" {
  interface ParserOptions {
    returnReply: (reply: never) => void;
    returnError: (err: Error) => void;
    returnFatalError?: (err: Error) => void;
    returnBuffers?: boolean;
    stringNumbers?: boolean;
  }
  export default class Parser {
    constructor(options: ParserOptions);
    execute(chunk: Buffer): void;
  }
}
