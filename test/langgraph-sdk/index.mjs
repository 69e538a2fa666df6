// The pinned LangGraph JS client, resolved through its package's exports
// from this folder's node_modules (npm ci here installs it), for the
// scripts of server/testdata/sdk, which live elsewhere in the tree.
export * from "@langchain/langgraph-sdk";
