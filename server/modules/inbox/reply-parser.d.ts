/** Types of node-email-reply-parser's Parser class, which its own index.d.ts does not export (it takes our regexes). */
declare module 'node-email-reply-parser/lib/Parser' {
  interface Email {
    getVisibleText(options?: { aggressive?: boolean }): string;
  }
  class Parser {
    constructor(signatureRegex?: RegExp, quotedLineRegex?: RegExp, quoteHeadersRegex?: RegExp[]);
    parse(text: string): Email;
  }
  export = Parser;
}
