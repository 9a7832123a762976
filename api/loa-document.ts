/**
 * Letters of authorisation (LOA). A customer uploads the LOA of its side as a PDF; where none was
 * uploaded, the exchange issues its own: a one-page PDF naming the ports to cross-connect.
 */

/** The first bytes of every PDF document. */
const PDF_MAGIC = Buffer.from('%PDF-');

export const isPdf = (document: Buffer): boolean =>
  document.length > PDF_MAGIC.length && document.subarray(0, PDF_MAGIC.length).equals(PDF_MAGIC);

/** Text as a PDF string literal: only printable ASCII, with the three special characters escaped. */
const pdfString = (text: string): string =>
  `(${text.replace(/[^\x20-\x7e]/g, '?').replace(/([\\()])/g, '\\$1')})`;

/** A one-page PDF (A4, Helvetica) with a title and lines of text. */
export function renderLoa(title: string, lines: readonly string[]): Buffer {
  const content = [
    'BT',
    '/F1 16 Tf',
    '56 780 Td',
    `${pdfString(title)} Tj`,
    '/F1 10 Tf',
    '0 -28 Td',
    ...lines.flatMap((line) => [`${pdfString(line)} Tj`, '0 -15 Td']),
    'ET',
  ].join('\n');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(Buffer.byteLength(body, 'latin1'));
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xref = Buffer.byteLength(body, 'latin1');
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}
