// The page runs under a Content-Security-Policy without 'unsafe-eval'
// (page.go). zod compiles fast object parsers with new Function unless it
// is told not to, and even its probe for eval is reported as a policy
// violation; jitless makes it parse without either. main.jsx imports
// this first, before any module builds a schema.
import { config } from "zod";

config({ jitless: true });
