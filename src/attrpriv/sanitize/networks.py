"""Torch building blocks of the global decoupler: encoders, decoders, heads, losses."""

from __future__ import annotations

import torch
from torch import nn


class GaussianEncoder(nn.Module):
    """A body (MLP or conv) followed by linear heads for the posterior mean and log-variance."""

    def __init__(self, body: nn.Module, body_dim: int, latent_dim: int) -> None:
        super().__init__()
        self.body = body
        self.mu = nn.Linear(body_dim, latent_dim)
        self.logvar = nn.Linear(body_dim, latent_dim)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.body(x)
        return self.mu(h), self.logvar(h).clamp(-12.0, 8.0)


def mlp(in_dim: int, hidden: int, out_dim: int) -> nn.Sequential:
    """Two hidden ReLU layers: enough for the tabular encoder, decoder and small heads."""
    return nn.Sequential(
        nn.Linear(in_dim, hidden),
        nn.ReLU(),
        nn.Linear(hidden, hidden),
        nn.ReLU(),
        nn.Linear(hidden, out_dim),
    )


def tabular_encoder(in_dim: int, hidden: int, latent_dim: int) -> GaussianEncoder:
    """MLP encoder for one-hot / scaled tabular rows."""
    body = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
    return GaussianEncoder(body, hidden, latent_dim)


def image_encoder(hidden: int, latent_dim: int, side: int) -> GaussianEncoder:
    """Small conv encoder for (n, 1, side, side) images; side must be divisible by 4."""
    body = nn.Sequential(
        nn.Conv2d(1, 16, 4, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 32, 4, stride=2, padding=1),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(32 * (side // 4) ** 2, hidden),
        nn.ReLU(),
    )
    return GaussianEncoder(body, hidden, latent_dim)


class ImageDecoder(nn.Module):
    """Transpose-conv decoder giving per-pixel Bernoulli logits."""

    def __init__(self, hidden: int, latent_dim: int, side: int) -> None:
        super().__init__()
        self.side = side
        self.fc = nn.Sequential(
            nn.Linear(latent_dim, hidden), nn.ReLU(), nn.Linear(hidden, 32 * (side // 4) ** 2)
        )
        self.deconv = nn.Sequential(
            nn.ReLU(),
            nn.ConvTranspose2d(32, 16, 4, stride=2, padding=1),
            nn.ReLU(),
            nn.ConvTranspose2d(16, 1, 4, stride=2, padding=1),
        )

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        h = self.fc(z).view(-1, 32, self.side // 4, self.side // 4)
        out: torch.Tensor = self.deconv(h)
        return out


def _centred_distances(x: torch.Tensor) -> torch.Tensor:
    """Double-centred Euclidean distance matrix of the rows of ``x``."""
    sq = (x * x).sum(-1)
    d = torch.sqrt((sq.unsqueeze(0) + sq.unsqueeze(1) - 2.0 * x @ x.T).clamp(min=0.0) + 1e-10)
    return d - d.mean(0, keepdim=True) - d.mean(1, keepdim=True) + d.mean()


def distance_correlation(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Sample distance correlation (in [0, 1]) of row-paired ``x`` and ``y``; differentiable."""
    a, b = _centred_distances(x), _centred_distances(y)
    dcov_xy = (a * b).mean()
    dcov_xx, dcov_yy = (a * a).mean(), (b * b).mean()
    denom = torch.sqrt(dcov_xx * dcov_yy + 1e-12)
    return torch.sqrt(dcov_xy.clamp(min=0.0) / denom + 1e-12)


def kl_standard_normal(mu: torch.Tensor, logvar: torch.Tensor) -> torch.Tensor:
    """KL(N(mu, diag exp(logvar)) || N(0, I)) per row, summed over latent dims."""
    return 0.5 * (mu**2 + logvar.exp() - 1.0 - logvar).sum(-1)
