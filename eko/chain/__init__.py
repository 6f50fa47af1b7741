"""The reflexive chain (seed reflexive-chain-anti-loop): tools, tool calling, anti-loop by hash,
the OL1 -> M1 -> M2 stages and the simple/reflexive classifier."""
