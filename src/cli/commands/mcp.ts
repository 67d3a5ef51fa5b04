import { spawn } from 'node:child_process';
import { Command } from '@commander-js/extra-typings';
import { loadMcpConfig, McpConfigError } from '../../worker/mcp/config.js';
import { loginTarget, loginToMcpServer } from '../../worker/mcp/oauth/login.js';
import { defaultTokenDirectory, FileTokenStore } from '../../worker/mcp/oauth/token-store.js';
import { packageVersion } from '../../node/package-version.js';

/**
 * `durable-agent mcp login SERVER`: log a person in to an MCP server configured with
 * `"oauth": {"grant": "authorization_code"}`, and keep the tokens in the worker's token directory.
 */
export function mcpCommand() {
  // Usage errors of the subcommands exit with ExitCode.Usage like every other command's (src/cli/index.ts).
  const mcp = new Command('mcp').description('Manage the MCP servers of the worker.').exitOverride();
  mcp
    .command('login')
    .description(
      'Authorize the worker to use an MCP server for you: prints the authorization URL (and opens it in a browser ' +
        'when one is at hand), receives the redirect on a loopback port, and stores the tokens where the worker reads them.',
    )
    .argument('<server>', 'the server\'s name under "mcpServers"')
    .option('--mcp-config <file>', 'the mcpServers file (default DURABLE_AGENT_MCP_CONFIG)')
    .option('--no-browser', 'only print the URL')
    .addHelpText(
      'after',
      `
Environment:
  DURABLE_AGENT_MCP_CONFIG  the mcpServers file (docs/mcp.md)
  DURABLE_AGENT_TOKEN_DIR   where tokens are kept (default ~/.config/durable-agent/mcp-tokens); run the login as
                            the worker's user with the worker's token directory`,
    )
    .action(async (name, options) => {
      const file = options.mcpConfig ?? process.env.DURABLE_AGENT_MCP_CONFIG;
      if (file === undefined || file === '') {
        throw new McpConfigError('No MCP config: pass --mcp-config FILE or set DURABLE_AGENT_MCP_CONFIG.');
      }
      const server = loginTarget(loadMcpConfig(file), name);
      const store = new FileTokenStore(defaultTokenDirectory());
      const result = await loginToMcpServer(server, {
        store,
        clientInfo: { name: 'durable-agent', version: packageVersion() },
        onAuthorizationUrl: (url) => {
          console.log(
            `Open this URL in a browser to authorize the worker to use MCP server "${name}":\n\n  ${url.href}\n`,
          );
          if (options.browser) openInBrowser(url.href);
          console.log('Waiting for the authorization server to redirect back...');
        },
      });
      console.log(
        `Logged in to MCP server "${name}" (${result.tools} tool${result.tools === 1 ? '' : 's'}); ` +
          `the tokens are in ${store.directory}.`,
      );
    });
  return mcp;
}

/** Best effort: never in CI or without a terminal, and a missing opener is no error (the URL is printed). */
function openInBrowser(url: string): void {
  if (process.env.CI !== undefined || !process.stdout.isTTY) return;
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  const child = spawn(opener, [url], { stdio: 'ignore', detached: true });
  child.on('error', () => undefined);
  child.unref();
}
