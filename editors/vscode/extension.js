// Starts `shardconv server` (the language server, over stdio) for MLIR, HLO text and XLA's .txt dumps.
"use strict";

const vscode = require("vscode");
const { LanguageClient, TransportKind } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const config = vscode.workspace.getConfiguration("shardconv");
  const command = config.get("path", "shardconv");
  const documentSelector = [
    { scheme: "file", language: "mlir" },
    { scheme: "file", language: "hlo" },
    { scheme: "untitled", language: "mlir" },
  ];
  if (config.get("checkTextDumps", true)) {
    documentSelector.push({ scheme: "file", pattern: "**/*.txt" });
  }
  const serverOptions = { command, args: ["server"], transport: TransportKind.stdio };
  client = new LanguageClient("shardconv", "shardconv", serverOptions, { documentSelector });
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
