import type { HttpResponse } from '../http';
import type { CheckContext } from '../runner';

/**
 * Letters of authorisation: downloading one and holding it to the document, and a PDF to upload.
 */

/** Accept header of a client that wants the letter, and a problem if there is none. */
export const PDF_ACCEPT = { accept: 'application/pdf, application/problem+json, application/json' };

export function downloadLoa(
  t: CheckContext,
  operationId: string,
  id: string,
  role: 'primary' | 'secondary' = 'primary',
): Promise<HttpResponse> {
  return t.call(operationId, { id, role, headers: PDF_ACCEPT });
}

const PDF_MAGIC = Buffer.from('%PDF-');

export const isPdf = (bytes: Buffer): boolean =>
  bytes.length > PDF_MAGIC.length && bytes.subarray(0, PDF_MAGIC.length).equals(PDF_MAGIC);

/** Holds a downloaded letter to the document: 200, labelled application/pdf, and a PDF. */
export function holdLoa(t: CheckContext, response: HttpResponse, id: string): boolean {
  if (!t.must(response.status === 200, `the LOA of ${id} answered ${response.status}, not 200`)) return false;
  const type = response.headers['content-type'];
  const labelled = t.must(
    /^application\/pdf\s*(;|$)/i.test(type ?? ''),
    `the LOA of ${id} is labelled ${type ?? '(no content type)'}, not application/pdf`,
  );
  const pdf = t.must(
    isPdf(response.bytes),
    `the LOA of ${id} is not a PDF: it starts ${JSON.stringify(response.bytes.subarray(0, 16).toString('latin1'))}`,
  );
  if (pdf)
    t.should(
      response.bytes.subarray(-1024).includes('%%EOF'),
      `the LOA of ${id} does not end with %%EOF; it looks cut short`,
    );
  return labelled && pdf;
}

/** A one-page PDF saying `text`, complete with its cross-reference table, as any reader expects. */
export function letter(text: string): Buffer {
  const line = text.replace(/[^\x20-\x7e]/g, '?').replace(/[\\()]/g, '\\$&');
  const content = `BT /F1 11 Tf 72 760 Td (${line}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>',
  ];
  let pdf = '%PDF-1.4\n';
  const offsets = objects.map((object, index) => {
    const offset = pdf.length;
    pdf += `${index + 1} 0 obj\n${object}\nendobj\n`;
    return offset;
  });
  const table = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  pdf += offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('');
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${table}\n%%EOF\n`;
  return Buffer.from(pdf, 'latin1');
}
