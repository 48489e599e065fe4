'use strict';
// A mentatd for the Node tests: on 127.0.0.1:<free port> over a temporary
// data dir, stopped with SIGTERM. The binary is $MENTATD (CTest sets it).

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('..');

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

class Mentatd {
  /** args: extra mentatd flags; token: the one the readiness ping sends. */
  constructor({ args = [], token } = {}) {
    if (!process.env.MENTATD) throw new Error('set MENTATD to the mentatd binary');
    this.token = token;
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mentat-node-test-'));
    this.extraArgs = args;
    this.proc = null;
    this.addr = null;
  }

  /** Starts it; resolves once a ping answers (another port if taken). */
  async start() {
    for (let attempt = 0; attempt < 5; attempt++) {
      this.addr = `127.0.0.1:${await freePort()}`;
      if (await this._spawnAndWait()) return this;
      await this.stop();
    }
    throw new Error(`mentatd did not start; log in ${this.dir}`);
  }

  /** SIGKILL: connections drop as in a crash. */
  async kill() {
    const p = this.proc;
    this.proc = null;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    await exited;
  }

  /** Starts it again on the same address and data dir. */
  async restart() {
    if (!(await this._spawnAndWait())) throw new Error(`mentatd did not restart; log in ${this.dir}`);
    return this;
  }

  // Runs mentatd on this.addr; true once a ping answers, false if it exits
  // or 30 s pass first.
  async _spawnAndWait() {
    const log = fs.openSync(path.join(this.dir, 'mentatd.log'), 'a');
    this.proc = spawn(process.env.MENTATD, [
      `--data-dir=${path.join(this.dir, 'data')}`, `--listen=${this.addr}`,
      '--readers-per-node=2', '--http=', ...this.extraArgs,
    ], { stdio: ['ignore', log, log] });
    fs.closeSync(log);
    let exited = false;
    this.proc.once('exit', () => { exited = true; });
    const deadline = Date.now() + 30000;
    const c = new Client(this.addr, { timeoutMs: 2000, token: this.token });
    try {
      while (!exited && Date.now() < deadline) {
        try {
          await c.ping();
          return true;
        } catch {
          await new Promise((r) => setTimeout(r, 100)); // not listening yet
        }
      }
    } finally {
      c.close();
    }
    return false;
  }

  async stop() {
    const p = this.proc;
    this.proc = null;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGTERM');
    const timer = setTimeout(() => p.kill('SIGKILL'), 15000);
    await exited;
    clearTimeout(timer);
  }

  async cleanup() {
    await this.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

module.exports = { Mentatd };
