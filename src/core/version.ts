/** hedgebench's version, recorded in every result file. Keep in step with package.json. */
export const VERSION = '0.1.0'
