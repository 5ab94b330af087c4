import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { closeName, editDistance } from '@shared/build/close-name';
import { sourcePackageNames } from '@shared/build/package-names';

describe('close names', () => {
  it.each([
    ['express', 'express', 0],
    ['expres', 'express', 1],
    ['lodahs', 'lodash', 1], // two neighbours swapped: one edit
    ['reactt-dom', 'react-dom', 1],
    ['kitten', 'sitting', 3],
  ])('%s to %s is %i edits', (a, b, d) => {
    expect(editDistance(a, b)).toBe(d);
  });

  it('suggests the closest name within a tolerance that grows with the length, never the name itself', () => {
    expect(closeName('expres', ['cors', 'express'])).toBe('express');
    expect(closeName('react-doom', ['react', 'react-dom'])).toBe('react-dom');
    expect(closeName('express', ['express'])).toBeUndefined();
    // Short names are too close to too many real ones to guess.
    expect(closeName('qs', ['ms'])).toBeUndefined();
    expect(closeName('mongose', ['mongodb', 'mongoose'])).toBe('mongoose');
    expect(closeName('axios', ['react', 'vue'])).toBeUndefined();
  });

  it("reads the names a source uses from its code's imports and its package.json", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-names-'));
    try {
      await fs.writeFile(
        path.join(dir, 'package.json'),
        JSON.stringify({ dependencies: { expres: '^4' }, devDependencies: { '@types/babel__core': '7' } }),
      );
      await fs.mkdir(path.join(dir, 'src'));
      await fs.writeFile(
        path.join(dir, 'src', 'server.js'),
        "const express = require('express');\nconst fs = require('node:fs');\nconst path = require('path');\nconst local = require('./local');\n",
      );
      await fs.writeFile(path.join(dir, 'src', 'app.mjs'), "import { z } from 'zod/v4';\nimport '@scope/pkg/sub';\n");
      await fs.mkdir(path.join(dir, 'node_modules', 'x'), { recursive: true });
      await fs.writeFile(path.join(dir, 'node_modules', 'x', 'index.js'), "require('never-read')");
      expect((await sourcePackageNames(dir)).sort()).toEqual(
        ['@babel/core', '@scope/pkg', '@types/babel__core', 'expres', 'express', 'zod'].sort(),
      );
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
