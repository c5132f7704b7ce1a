/// A collection's status.
pub async fn status(ctx: &Ctx, params: StatusParams) -> Result<Content, Error> {
    Content::json(&ctx.status(params)?)
}
#[doc(hidden)]
#[::groundkit_core::__private::linkme::distributed_slice(
    ::groundkit_core::__private::RESOURCES
)]
#[linkme(crate = ::groundkit_core::__private::linkme)]
static __GROUNDKIT_RESOURCE_STATUS: ::groundkit_core::__private::ResourceSpec = {
    #[allow(dead_code, clippy::needless_borrow)]
    fn __groundkit_checks(params: &StatusParams) {
        ::groundkit_core::__private::assert_context::<Ctx>();
        ::groundkit_core::__private::assert_request::<StatusParams>();
        ::groundkit_core::__private::assert_resource_return::<Result<Content, Error>>();
        ::groundkit_core::__private::path_param(&params.collection);
    }
    #[allow(unused_variables)]
    fn __groundkit_handler<'a>(
        context: &'a ::groundkit_core::__private::ErasedContext,
        arguments: ::groundkit_core::__private::serde_json::Value,
        call: ::groundkit_core::__private::RequestContext,
    ) -> ::groundkit_core::__private::BoxFuture<
        'a,
        ::groundkit_core::__private::core::result::Result<
            ::groundkit_core::__private::Content,
            ::groundkit_core::__private::Error,
        >,
    > {
        ::groundkit_core::__private::std::boxed::Box::pin(async move {
            let context = ::groundkit_core::__private::downcast_context::<Ctx>(context)?;
            let params = ::groundkit_core::__private::parse_arguments::<
                StatusParams,
            >(arguments)?;
            ::groundkit_core::__private::ResourceReturn::into_content(
                status(context, params).await,
            )
        })
    }
    fn __groundkit_complete_0<'a>(
        context: &'a ::groundkit_core::__private::ErasedContext,
        completion: ::groundkit_core::__private::Completion,
        _call: ::groundkit_core::__private::RequestContext,
    ) -> ::groundkit_core::__private::BoxFuture<
        'a,
        ::groundkit_core::__private::core::result::Result<
            ::groundkit_core::__private::std::vec::Vec<
                ::groundkit_core::__private::std::string::String,
            >,
            ::groundkit_core::__private::Error,
        >,
    > {
        ::groundkit_core::__private::std::boxed::Box::pin(async move {
            let context = ::groundkit_core::__private::downcast_context::<Ctx>(context)?;
            ::groundkit_core::__private::CompleterReturn::into_values(
                collection_names(context, completion).await,
            )
        })
    }
    ::groundkit_core::__private::ResourceSpec::new::<
        ::groundkit_core::__private::ReadOnly,
    >(::groundkit_core::__private::ResourceParts {
        name: "status",
        title: ::groundkit_core::__private::core::option::Option::None,
        icon: ::groundkit_core::__private::core::option::Option::None,
        summary: "A collection's status.",
        description: "A collection's status.",
        mime_type: "application/json",
        uri: ::groundkit_core::__private::UriTemplate {
            template: "grk://{collection}/status",
            scheme: "grk",
            segments: &[
                ::groundkit_core::__private::Segment::Var("collection"),
                ::groundkit_core::__private::Segment::Literal("status"),
            ],
        },
        route: ::groundkit_core::__private::RestRoute {
            method: ::groundkit_core::__private::HttpMethod::Get,
            path: "/resources/grk/{collection}/status",
            params: &["collection"],
        },
        context: ::groundkit_core::__private::type_id::<Ctx>,
        context_name: ::groundkit_core::__private::core::any::type_name::<Ctx>,
        params_schema: ::groundkit_core::__private::input_schema::<StatusParams>,
        completers: &[
            ::groundkit_core::__private::Completer {
                argument: "collection",
                handler: __groundkit_complete_0,
            },
        ],
        handler: __groundkit_handler,
    })
};
