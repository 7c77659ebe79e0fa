//! What a server offers besides tools: its prompts (templates of a message, with arguments,
//! which the chat offers as slash commands) and its resources (data it can be asked to read by
//! URI). Each request is bounded by a timeout and goes through the server's connection, so a
//! server that stopped is restarted as for a tool call. The resource list is kept and listed
//! again when the server says it changed (`notifications/resources/list_changed`), as tools are.

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use rmcp::model::{
    GetPromptRequestParams, GetPromptResult, JsonObject, Prompt, ReadResourceRequestParams,
    ReadResourceResult, Resource,
};
use rmcp::service::Peer;
use rmcp::{RoleClient, ServiceError};
use tokio::time::Instant;

use crate::error::McpError;
use crate::server::McpServer;

impl McpServer {
    /// Whether the server said in its handshake that it has prompts.
    pub fn offers_prompts(&self) -> bool {
        self.capabilities().prompts.is_some()
    }

    /// Whether the server said in its handshake that it has resources.
    pub fn offers_resources(&self) -> bool {
        self.capabilities().resources.is_some()
    }

    /// The server's prompts, asked now (none, without asking, from a server that offers none).
    ///
    /// # Errors
    ///
    /// As [`McpServer::call_tool`], for the `prompts/list` request.
    pub async fn prompts(&self) -> Result<Vec<Prompt>, McpError> {
        if !self.offers_prompts() {
            return Ok(Vec::new());
        }
        let timeout = self.config().startup_timeout();
        self.ask("prompts/list", timeout, |peer| async move {
            peer.list_all_prompts().await
        })
        .await
    }

    /// The messages of the prompt `name` with `arguments` filled in.
    ///
    /// # Errors
    ///
    /// As [`McpServer::call_tool`], for the `prompts/get` request; an unknown prompt or a
    /// missing argument is the server's [`McpError::Refused`].
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
        timeout: Duration,
    ) -> Result<GetPromptResult, McpError> {
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            let object: JsonObject = arguments
                .into_iter()
                .map(|(key, value)| (key, serde_json::Value::String(value)))
                .collect();
            params.arguments = Some(object);
        }
        self.ask("prompts/get", timeout, |peer| async move {
            peer.get_prompt(params).await
        })
        .await
    }

    /// The resources as last listed: by [`McpServer::refresh_resources`], which
    /// [`crate::McpServers`] calls at start and after each change the server announces.
    pub fn listed_resources(&self) -> Vec<Resource> {
        self.resources
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Lists the server's resources again (none, without asking, from a server that offers
    /// none) and keeps the list.
    ///
    /// # Errors
    ///
    /// As [`McpServer::call_tool`], for the `resources/list` request; the previous list stays.
    pub async fn refresh_resources(&self) -> Result<(), McpError> {
        if !self.offers_resources() {
            return Ok(());
        }
        let timeout = self.config().startup_timeout();
        let listed = self
            .ask("resources/list", timeout, |peer| async move {
                peer.list_all_resources().await
            })
            .await?;
        *self
            .resources
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = listed;
        Ok(())
    }

    /// How many times the server said its resource list changed
    /// (`notifications/resources/list_changed`); a receiver wakes at each change.
    pub fn resource_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.list_changes().resources.subscribe()
    }

    /// How many times the server said its prompt list changed
    /// (`notifications/prompts/list_changed`); a receiver wakes at each change.
    pub fn prompt_changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.list_changes().prompts.subscribe()
    }

    /// Reads the resource `uri`.
    ///
    /// # Errors
    ///
    /// As [`McpServer::call_tool`], for the `resources/read` request; an unknown URI is the
    /// server's [`McpError::Refused`].
    pub async fn read_resource(
        &self,
        uri: &str,
        timeout: Duration,
    ) -> Result<ReadResourceResult, McpError> {
        let params = ReadResourceRequestParams::new(uri);
        self.ask("resources/read", timeout, |peer| async move {
            peer.read_resource(params).await
        })
        .await
    }

    /// Sends one request (`method`, for messages) through the live connection within
    /// `timeout`, restarting the server first when it had stopped.
    async fn ask<T, F, Fut>(
        &self,
        method: &str,
        timeout: Duration,
        request: F,
    ) -> Result<T, McpError>
    where
        F: FnOnce(Peer<RoleClient>) -> Fut,
        Fut: Future<Output = Result<T, ServiceError>>,
    {
        let deadline = Instant::now() + timeout;
        let timed_out = || McpError::Timeout {
            server: self.name().to_owned(),
            tool: method.to_owned(),
            after: timeout,
        };
        let connection = tokio::time::timeout_at(deadline, self.connection())
            .await
            .map_err(|_| timed_out())??;
        let peer = connection.service.peer().clone();
        match tokio::time::timeout_at(deadline, request(peer)).await {
            Err(_) | Ok(Err(ServiceError::Timeout { .. })) => Err(timed_out()),
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(error)) => Err(self.failed(&connection, method, error).await),
        }
    }
}
