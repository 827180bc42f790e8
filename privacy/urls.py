from django.urls import path

from privacy.apis import ErasureApi

urlpatterns = [
    path("privacy/erasures", ErasureApi.as_view(), name="api-privacy-erasures"),
]
