"""Graph code shared by the network mechanisms: the network, Markov quilts, learning."""
