/** The one function of `unicode-confusables` used here (its package ships no usable typings). */
declare module 'unicode-confusables' {
  /** The string with each character replaced by the prototype Unicode's confusables table gives it. */
  export function rectifyConfusion(input: string): string;
}
