from django.urls import path

import verification.converters  # noqa: F401  (registers <verification_id:...>)
from verification.apis import VerificationApi, VerifyApi, VerifyBatchApi

urlpatterns = [
    path("verify", VerifyApi.as_view(), name="api-verify"),
    path("verify/batch", VerifyBatchApi.as_view(), name="api-verify-batch"),
    path("verifications/<verification_id:verification_id>", VerificationApi.as_view(), name="api-verification"),
]
