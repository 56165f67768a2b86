/**
 * `@switchboard/cli`: the `switchboard` command, and the pieces it is made
 * of for scripts of your own.
 *
 * @module
 */
export { type AppModule, type LoadedApp, loadAppModule } from './app-module.js';
export type { CliIo } from './cli-io.js';
export { runCli, USAGE_EXIT } from './main.js';
export { escapeHtml, htmlReport } from './reports/report-html.js';
export { markdownReport } from './reports/report-markdown.js';
export { textDiff, textReport } from './reports/report-text.js';
