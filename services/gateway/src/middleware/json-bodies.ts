import express, { type RequestHandler } from 'express';

/**
 * Reads request bodies as JSON whatever their content type: bodies are JSON by contract, and a wrong header should
 * not turn into {}. Any JSON value is accepted here; each route's schema says which it takes.
 */
export function jsonBodies(limitBytes: number): RequestHandler {
  return express.json({ limit: limitBytes, type: () => true, strict: false });
}
