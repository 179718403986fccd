/**
 * The csv-stringify options every CSV hedgebench writes shares. Results are
 * opened in spreadsheets, and a label, a file name or an error message is
 * text a user (or a target) chose: a cell beginning with `=`, `+`, `-`, `@`,
 * TAB or CR would run as a formula (OWASP "CSV injection"). csv-stringify's
 * own `escape_formulas` puts a `'` before such a string; a number cell is
 * left as it is (a negative number stays a number), so a spreadsheet still
 * types every numeric column. A cell holding a line break is quoted
 * whatever the record delimiter (csv-stringify stops quoting them once one
 * is chosen), so a CR in a name never starts a row of its own.
 */
export const CSV_SAFETY = { escape_formulas: true, quote_record_delimiter: true } as const
