#!/usr/bin/env node
// The `zidane-worker` command of the npm package: the platform package's
// `zidane-worker` binary (a worker behind a Restate server), run by the shared launcher.
"use strict";

require("./launch.js").launch("zidane-worker");
