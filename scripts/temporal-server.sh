#!/usr/bin/env bash
# The Temporal server version of the production topology, in one place: docker-compose.yml runs the
# temporalio/server and temporalio/admin-tools images of this version, and a unit test
# (test/unit/deployment.test.ts) checks that they agree.
VERSION="1.29.1"
